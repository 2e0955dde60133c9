//! [`SceneMigration`]: a game's own upgrade of its scene files, run on every load it applies to,
//! before anything is decoded.

use hecs::World;
use serde_json::Value;

use crate::diagnostic::DiagnosticCode;
use crate::json::SourceText;
use crate::scene::format::SCENE_FORMAT_VERSION;
use crate::scene::header::{read_scene_header, SceneHeader};
#[cfg(feature = "binary")]
use crate::scene::load::binary_document;
use crate::scene::load::{load_json_text, upgrade_layout, Context, LoadedScene, SceneError};
use crate::scene::save::SceneEncoding;

/// A game's own upgrade of its scene files (saves and levels): given the whole document as
/// JSON in the current layout — binary scenes too, their values read by the registered
/// component types — and the file's header (its format version and the game's `meta`), it
/// can rename, split or drop components and change values before anything is decoded.
///
/// It runs on every load whose header `when` accepts (by default, every load). Running it
/// costs a JSON round trip of the whole document, so a game that stamps its version into
/// `meta` ([`SceneSaveOptions::meta`](crate::SceneSaveOptions::meta)) can run it only for
/// older saves. Renamed components need no hook (register the old name as an alias), nor do
/// renamed fields (`#[serde(alias = "...")]`) or fields with a default.
///
/// # Example
/// ```
/// use archetype_engine::{SceneHeader, SceneLoadOptions, SceneMigration};
/// use serde_json::Value;
///
/// /// Saves before 1.4 stored `Health.hp`; it is `Health.current` now.
/// fn hp_to_current(document: &mut Value, _header: &SceneHeader) -> Result<(), String> {
///     for entity in document["entities"].as_array_mut().ok_or("no entity list")? {
///         if let Some(health) = entity["components"].get_mut("Health") {
///             if let Some(hp) = health.as_object_mut().and_then(|h| h.remove("hp")) {
///                 health["current"] = hp;
///             }
///         }
///     }
///     Ok(())
/// }
///
/// fn before_1_4(header: &SceneHeader) -> bool {
///     let version = header.meta.as_ref().and_then(|meta| meta["game_version"].as_str());
///     version.is_none_or(|version| version < "1.4")
/// }
///
/// let mut options = SceneLoadOptions::default();
/// options.migration = Some(SceneMigration::new(hp_to_current).when(before_1_4));
/// # let _ = options;
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SceneMigration {
    migrate: MigrateFn,
    when: fn(&SceneHeader) -> bool,
}

/// The function of a [`SceneMigration`]: rewrites a document; an error refuses the scene.
pub type MigrateFn = fn(document: &mut Value, header: &SceneHeader) -> Result<(), String>;

impl SceneMigration {
    /// A migration run on every load.
    pub fn new(migrate: MigrateFn) -> Self {
        SceneMigration {
            migrate,
            when: |_| true,
        }
    }

    /// Runs the migration only on loads of files whose header `when` accepts.
    pub fn when(mut self, when: fn(&SceneHeader) -> bool) -> Self {
        self.when = when;
        self
    }
}

/// Loads `bytes` through the context's migration, if it has one that applies to the file;
/// `None` otherwise (and for bytes whose header cannot be read: the ordinary load says why).
pub(super) fn load_migrated(
    context: &Context<'_>,
    world: &mut World,
    bytes: &[u8],
) -> Option<Result<LoadedScene, SceneError>> {
    let migration = context.options.migration?;
    let header = read_scene_header(bytes).ok()?;
    if !(migration.when)(&header) {
        return None;
    }
    let mut document = match header.encoding {
        SceneEncoding::Json => {
            let text = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
            let mut document: Value = serde_json::from_slice(text).ok()?;
            upgrade_layout(&mut document, header.format);
            document
        }
        #[cfg(feature = "binary")]
        SceneEncoding::Binary => match binary_document(context, bytes) {
            Ok(document) => document,
            Err(error) => return Some(Err(error)),
        },
    };
    Some(migrate_and_load(
        context,
        world,
        &mut document,
        &header,
        migration,
    ))
}

/// Runs the migration on `document`, then loads it. Errors have no position: they are
/// found in the migrated document, not the file.
fn migrate_and_load(
    context: &Context<'_>,
    world: &mut World,
    document: &mut Value,
    header: &SceneHeader,
    migration: SceneMigration,
) -> Result<LoadedScene, SceneError> {
    (migration.migrate)(document, header).map_err(|message| {
        let format = header.format;
        context.error(
            DiagnosticCode::Malformed,
            format!("the game's migration (from scene format {format}) failed: {message}"),
        )
    })?;
    if let Value::Object(top) = document {
        top.insert("format".to_string(), Value::from(SCENE_FORMAT_VERSION));
    }
    let text = serde_json::to_string(document)
        .map_err(|error| context.error(DiagnosticCode::Malformed, error.to_string()))?;
    let text =
        SourceText::from_bytes(text.into_bytes()).map_err(|error| context.text_error(error))?;
    load_json_text(context, world, &text).map_err(|mut error| {
        error.diagnostic.position = None;
        error.diagnostic.span = None;
        error
    })
}
