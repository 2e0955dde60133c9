//! Archetypes: the files designers edit (`file`, `name`, `tree`, `source`, `renames`), the
//! designer language resolved into one value per component (`resolver`, `operator`,
//! `written_operator`, `arithmetic`, `variation`, `value_merge`, checked references), compiled archetypes that spawn without
//! parsing JSON (`compiled`, `spawn_rng`), and the library that serves them (`library`,
//! `dependency_graph`, `loaded`, `instance`).

mod archetype_ref;
mod arithmetic;
mod asset_path;
mod case_index;
mod compiled;
#[cfg(feature = "binary")]
mod cook;
mod dependency_graph;
mod doc_summary;
mod file;
mod held_back;
mod instance;
mod library;
mod loaded;
mod name;
mod operator;
mod partial_check;
mod rebuild_job;
mod reference_context;
mod renames;
mod resolved_tree;
mod resolver;
mod source;
mod spawn_error;
mod spawn_rng;
mod tree;
mod value_merge;
mod variation;
mod written_operator;

pub use crate::component::{ArchetypeId, ArchetypeInstance, OverridesId};
pub use archetype_ref::ArchetypeRef;
pub use asset_path::{AnyAsset, AssetKind, AssetPath};
pub(crate) use compiled::{resolve_ref_path, suggest_field, CompiledArchetype, CompiledNode};
#[cfg(feature = "binary")]
pub use cook::{CookError, CookErrorKind, COOK_FORMAT_VERSION};
pub use file::{keys, FORMAT_VERSION};
pub use held_back::{HeldBack, HeldBackReason};
pub(crate) use instance::{override_shape, ShapesAtHand};
pub use instance::{InstanceOverrides, OverrideOrigin};
pub(crate) use library::{map_on_threads, worker_threads};
pub use library::{ArchetypeChange, ArchetypeLibrary, LibraryUpdate, LoadError, LoadOptions};
pub use library::{FieldValue, WriteBackError};
pub use loaded::Archetype;
pub use name::{check_archetype_name, NameProblem, NewNameError, MAX_NAME_BYTES, NAME_PATTERN};
pub use resolver::ResolvedEntity;
pub(crate) use source::read_limited;
pub use spawn_error::SpawnError;
pub(crate) use spawn_rng::SpawnRng;
pub use spawn_rng::DEFAULT_SPAWN_SEED;
#[cfg(feature = "hot-reload")]
pub(crate) use tree::is_archetype_file_name;
