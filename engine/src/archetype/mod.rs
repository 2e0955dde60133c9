//! Archetypes: the files designers edit (`file`, `name`, `tree`, `source`, `renames`), the
//! designer language resolved into one value per component (`resolver`, `operator`,
//! `variation`, `value_merge`, checked references), compiled archetypes that spawn without
//! parsing JSON (`compiled`, `spawn_rng`), and the library that serves them (`library`,
//! `loaded`, `instance`).

pub(crate) mod archetype_ref;
pub(crate) mod asset_path;
pub(crate) mod compiled;
pub(crate) mod file;
pub(crate) mod instance;
pub(crate) mod library;
pub(crate) mod loaded;
pub(crate) mod name;
pub(crate) mod operator;
pub(crate) mod partial_check;
pub(crate) mod reference_context;
pub(crate) mod renames;
pub(crate) mod resolver;
pub(crate) mod source;
pub(crate) mod spawn_error;
pub(crate) mod spawn_rng;
pub(crate) mod tree;
pub(crate) mod value_merge;
pub(crate) mod variation;
