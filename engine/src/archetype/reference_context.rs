//! What checked references ([`ArchetypeRef`](crate::ArchetypeRef),
//! [`AssetPath`](crate::AssetPath)) are checked against while a value is read: the archetypes
//! of the library and the files under the assets root.
//!
//! As with entity references (`component/entity_ref.rs`), serde gives a `Deserialize` impl no way to
//! receive context, so the library installs one in a thread-local slot for the duration of an
//! operation that reads component values (compiling archetypes, spawn-time overrides, loading a
//! scene, patching live entities). Without one, references are read unchecked.

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::component::serde_context::{self, References};
use crate::component::ArchetypeId;
use crate::diagnostic::{quoted, DiagnosticCode};
use crate::json::did_you_mean;

/// The archetypes a library has: name → ID, and the names sorted (for suggestions).
#[derive(Clone, Debug, Default)]
pub(crate) struct ArchetypeTargets {
    pub ids: FxHashMap<Arc<str>, ArchetypeId>,
    pub sorted: Vec<Arc<str>>,
}

/// The files under an assets root, by their path relative to it (`/` separators).
#[derive(Debug)]
pub(crate) struct AssetIndex {
    /// The root as shown in messages.
    pub root: PathBuf,
    pub files: BTreeSet<String>,
}

/// The most files an asset index holds: a root that is not an assets directory (a home
/// directory, `/`) must not make a load walk the disk for minutes.
const MAX_ASSET_FILES: usize = 1_000_000;

impl AssetIndex {
    /// Every regular file under `root` (hidden files and directories skipped; symbolic links
    /// not followed). `None` if `root` is not a directory.
    pub fn scan(root: &Path) -> Option<AssetIndex> {
        if !root.is_dir() {
            return None;
        }
        let mut files = BTreeSet::new();
        let mut pending = vec![(root.to_path_buf(), String::new())];
        while let Some((dir, prefix)) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                if name.starts_with('.') || files.len() >= MAX_ASSET_FILES {
                    continue;
                }
                let relative = format!("{prefix}{name}");
                match entry.file_type() {
                    Ok(kind) if kind.is_dir() => {
                        pending.push((entry.path(), format!("{relative}/")))
                    }
                    Ok(kind) if kind.is_file() => {
                        files.insert(relative);
                    }
                    _ => {}
                }
            }
        }
        Some(AssetIndex {
            root: root.to_path_buf(),
            files,
        })
    }
}

/// What a library's references are checked against (cheap to clone, shared across threads).
#[derive(Clone, Debug, Default)]
pub(crate) struct ReferenceTargets {
    pub archetypes: Arc<ArchetypeTargets>,
    pub assets: Option<Arc<AssetIndex>>,
}

impl ReferenceTargets {
    /// A fresh context checking against these targets.
    pub fn context(&self) -> Rc<ReferenceContext> {
        ReferenceContext::new(self.archetypes.clone(), self.assets.clone())
    }
}

/// Why a reference was refused: what the library reports, typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RefFailure {
    pub code: DiagnosticCode,
    pub message: String,
    pub suggestion: Option<String>,
}

impl RefFailure {
    /// The message with its suggestion, for places that only keep a message (serde errors).
    pub fn full_message(&self) -> String {
        match &self.suggestion {
            Some(suggestion) => format!("{}; did you mean `{suggestion}`?", self.message),
            None => self.message.clone(),
        }
    }
}

/// The context of one operation: what references are checked against, and what they named.
pub(crate) struct ReferenceContext {
    archetypes: Arc<ArchetypeTargets>,
    assets: Option<Arc<AssetIndex>>,
    /// The archetype names read (found or not), so an archetype can be checked again when one
    /// appears or disappears.
    named: RefCell<Vec<Arc<str>>>,
    /// The last reference refused.
    failure: RefCell<Option<RefFailure>>,
}

impl ReferenceContext {
    pub fn new(archetypes: Arc<ArchetypeTargets>, assets: Option<Arc<AssetIndex>>) -> Rc<Self> {
        Rc::new(ReferenceContext {
            archetypes,
            assets,
            named: RefCell::new(Vec::new()),
            failure: RefCell::new(None),
        })
    }

    /// What this context checks against, for a context made later (on another thread, or
    /// when values read now are decoded again).
    pub fn targets(&self) -> ReferenceTargets {
        ReferenceTargets {
            archetypes: self.archetypes.clone(),
            assets: self.assets.clone(),
        }
    }

    /// Runs `f` with this context installed on this thread (the previous one is restored after,
    /// even if `f` panics, so operations nest).
    pub fn install<R>(self: &Rc<Self>, f: impl FnOnce() -> R) -> R {
        let context: Rc<dyn Any> = self.clone();
        serde_context::scoped::<References, _>(Some(context), f).0
    }

    /// The context installed on this thread, if any.
    pub fn current() -> Option<Rc<ReferenceContext>> {
        serde_context::with::<References, _>(|slot| slot.borrow().clone())
            .and_then(|context| context.downcast::<ReferenceContext>().ok())
    }

    /// Takes the last refusal (and forgets it).
    pub fn take_failure(&self) -> Option<RefFailure> {
        self.failure.borrow_mut().take()
    }

    /// Takes the archetype names read so far.
    pub fn take_named(&self) -> Vec<Arc<str>> {
        std::mem::take(&mut *self.named.borrow_mut())
    }

    /// Records `failure` as the last refusal, and gives it back.
    pub fn refuse(&self, failure: RefFailure) -> RefFailure {
        *self.failure.borrow_mut() = Some(failure.clone());
        failure
    }

    /// The ID of archetype `name`, or why there is none (with a suggestion).
    pub fn archetype(&self, name: &str) -> Result<ArchetypeId, RefFailure> {
        self.named.borrow_mut().push(Arc::from(name));
        match self.archetypes.ids.get(name) {
            Some(&id) => Ok(id),
            None => {
                let names = self.archetypes.sorted.iter().map(|n| &**n);
                Err(self.refuse(RefFailure {
                    code: DiagnosticCode::UnknownArchetype,
                    message: format!("archetype {} does not exist", quoted(name)),
                    suggestion: did_you_mean(name, names),
                }))
            }
        }
    }

    /// Checks that the asset `path` exists under the assets root (when there is one) and has
    /// one of `extensions` (when any are given).
    pub fn asset(&self, path: &str, extensions: &[&str]) -> Result<(), RefFailure> {
        let extension = path.rsplit_once('.').map(|(_, ext)| ext);
        if !extensions.is_empty() && !extension.is_some_and(|ext| extensions.contains(&ext)) {
            let wanted: Vec<String> = extensions.iter().map(|e| format!("`.{e}`")).collect();
            return Err(self.refuse(RefFailure {
                code: DiagnosticCode::InvalidAsset,
                message: format!(
                    "asset {} must be a {} file",
                    quoted(path),
                    wanted.join(" or ")
                ),
                suggestion: None,
            }));
        }
        let Some(assets) = &self.assets else {
            return Ok(());
        };
        if assets.files.contains(path) {
            return Ok(());
        }
        let suggestion = did_you_mean(path, assets.files.iter().map(String::as_str));
        Err(self.refuse(RefFailure {
            code: DiagnosticCode::InvalidAsset,
            message: format!(
                "asset {} does not exist in `{}`",
                quoted(path),
                assets.root.display()
            ),
            suggestion,
        }))
    }
}
