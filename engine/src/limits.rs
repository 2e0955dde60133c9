//! [`Limits`]: bounds on untrusted input, so a bad file cannot exhaust memory or the stack.

/// Bounds on what the loaders accept. The defaults are generous for hand-written data and
/// small enough that a hostile or corrupt file is rejected quickly.
///
/// New limits may be added in minor versions: start from [`Limits::default`] and change the
/// ones you need.
///
/// # Example
/// ```
/// use archetype_engine::{Limits, LoadOptions};
/// let mut limits = Limits::default();
/// limits.max_depth = 32;
/// let mut options = LoadOptions::default();
/// options.limits = limits;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest archetype or scene file read, in bytes (default 4 MiB for archetypes).
    pub max_file_bytes: u64,
    /// Deepest nesting of JSON arrays and objects (default 64; at most 127).
    pub max_depth: usize,
    /// Deepest nesting of `children` in an archetype (default 8).
    pub max_children_depth: usize,
    /// Most entities one scene may hold, with every scene it places placed (default 1,000,000).
    pub max_scene_entities: usize,
    /// Most component values one scene may hold, all entities together and with every scene it
    /// places placed (default 16,000,000:
    /// 16 per entity at the entity limit). Checked as the scene is read, like the entity
    /// count, so a refused scene never costs more memory than the limits allow.
    pub max_scene_values: usize,
    /// Largest scene file read, in bytes (default 512 MiB).
    pub max_scene_bytes: u64,
    /// Deepest nesting of scenes placed inside scenes: a scene that places one that places
    /// one is nested 2 deep (default 32, as an archetype's chain of `extends`; at most 64).
    pub max_sub_scene_depth: usize,
    /// Largest cooked library file read ([`ArchetypeLibrary::load_cooked_file`](crate::ArchetypeLibrary::load_cooked_file)),
    /// in bytes (default 1 GiB).
    pub max_cook_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 4 * 1024 * 1024,
            max_depth: 64,
            max_children_depth: 8,
            max_scene_entities: 1_000_000,
            max_scene_values: 16_000_000,
            max_scene_bytes: 512 * 1024 * 1024,
            max_sub_scene_depth: 32,
            max_cook_bytes: 1024 * 1024 * 1024,
        }
    }
}
