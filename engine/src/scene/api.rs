//! [`Scenes`]: saving and loading scenes with signatures a caller can guess. A thin layer over
//! [`save_scene`], [`save_scene_to_path`], [`load_scene`] and [`load_scene_from_path`], which
//! stay for callers that prefer free functions.

use std::path::Path;

use hecs::World;

use crate::archetype::ArchetypeLibrary;
use crate::scene::load::{
    load_scene, load_scene_from_path, LoadedScene, SceneError, SceneLoadOptions,
};
use crate::scene::save::{
    save_scene, save_scene_to_path, SceneEncoding, SceneSaveError, SceneSaveOptions,
};

/// Saves and loads scenes for one library: `save_to_path` / `load_from_path` for files,
/// `save_to_vec` / `load_from_slice` for bytes in memory, with the options set once.
///
/// # Example
/// ```
/// use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, SceneEncoding, Scenes};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// # struct Health { current: f32, max: f32 }
/// let mut registry = ComponentRegistry::new();
/// registry.register::<Health>()?;
/// let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
/// library.set_sources([("goblin.json", Some(r#"{ "components": { "Health": { "current": 7, "max": 7 } } }"#))]);
/// let mut world = hecs::World::new();
/// let goblin = library.spawn(&mut world, "goblin")?;
/// world.get::<&mut Health>(goblin)?.current = 3.0; // wounded: the save keeps it
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("arena.scene.json");
/// let scenes = Scenes::new(&library);
/// scenes.save_to_path(&path, &world)?; // atomic; `.scene.bin` would be binary
///
/// let mut loaded = hecs::World::new();
/// let scene = scenes.load_from_path(&path, &mut loaded)?;
/// let again = scene.entities()[0];
/// assert_eq!(*loaded.get::<&Health>(again)?, Health { current: 3.0, max: 7.0 });
///
/// // The same in memory.
/// let bytes = scenes.save_to_vec(&world, SceneEncoding::Json)?;
/// let mut copy = hecs::World::new();
/// assert_eq!(scenes.load_from_slice(&bytes, &mut copy)?.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Scenes<'a> {
    library: &'a ArchetypeLibrary,
    load_options: SceneLoadOptions,
    save_options: SceneSaveOptions,
}

impl<'a> Scenes<'a> {
    /// Scenes of `library`'s archetypes, with the default options.
    pub fn new(library: &'a ArchetypeLibrary) -> Self {
        Scenes {
            library,
            load_options: SceneLoadOptions::default(),
            save_options: SceneSaveOptions::default(),
        }
    }

    /// Loads with `options` (ID conflicts, limits, migration, unknown fields).
    pub fn with_load_options(mut self, options: SceneLoadOptions) -> Self {
        self.load_options = options;
        self
    }

    /// Saves with `options` (full values, dangling references, a selection, threads).
    pub fn with_save_options(mut self, options: SceneSaveOptions) -> Self {
        self.save_options = options;
        self
    }

    /// Saves `world` to `path` atomically, in the encoding its extension says (`.bin`: binary,
    /// anything else: JSON). See [`save_scene_to_path`].
    ///
    /// # Errors
    /// See [`SceneSaveError`]; the previous file is intact.
    pub fn save_to_path(
        &self,
        path: impl AsRef<Path>,
        world: &World,
    ) -> Result<(), SceneSaveError> {
        save_scene_to_path(path, world, self.library, &self.save_options)
    }

    /// Saves `world` to bytes in memory. See [`save_scene`].
    ///
    /// # Errors
    /// See [`SceneSaveError`].
    pub fn save_to_vec(
        &self,
        world: &World,
        encoding: SceneEncoding,
    ) -> Result<Vec<u8>, SceneSaveError> {
        save_scene(world, self.library, encoding, &self.save_options)
    }

    /// Loads the scene file at `path` into `world`; errors name the file. See
    /// [`load_scene_from_path`].
    ///
    /// # Errors
    /// See [`SceneError`]; the world is as it was.
    pub fn load_from_path(
        &self,
        path: impl AsRef<Path>,
        world: &mut World,
    ) -> Result<LoadedScene, SceneError> {
        load_scene_from_path(path, world, self.library, &self.load_options)
    }

    /// Loads a scene from bytes in memory (either encoding) into `world`; errors have no file
    /// name (see [`load_named_slice`](Self::load_named_slice)). See [`load_scene`].
    ///
    /// # Errors
    /// See [`SceneError`]; the world is as it was.
    pub fn load_from_slice(
        &self,
        bytes: &[u8],
        world: &mut World,
    ) -> Result<LoadedScene, SceneError> {
        load_scene(bytes, None, world, self.library, &self.load_options)
    }

    /// Loads a scene from bytes in memory that came from `file` (a save slot read by the game,
    /// an asset from a pack): errors name it as if read from there.
    ///
    /// # Errors
    /// See [`SceneError`]; the world is as it was.
    pub fn load_named_slice(
        &self,
        bytes: &[u8],
        file: impl AsRef<Path>,
        world: &mut World,
    ) -> Result<LoadedScene, SceneError> {
        let file = Some(file.as_ref());
        load_scene(bytes, file, world, self.library, &self.load_options)
    }
}
