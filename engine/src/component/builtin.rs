//! The small built-in components and the registration of every built-in.

use serde::{Deserialize, Serialize};

use crate::component::instance_marker::ArchetypeInstance;
use crate::component::registry::{ComponentOptions, ComponentRegistry};
use crate::component::{EntityRef, StableId, Transform};

/// A display name, written as a plain string: `"Name": "Grukk"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Name(pub String);

impl Name {
    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Name {
    fn from(name: &str) -> Self {
        Name(name.to_string())
    }
}

/// The entity this one is a child of. Set by spawning (from an archetype's `children`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Parent(pub EntityRef);

/// The entities that are children of this one, in the archetype's child order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Children(pub Vec<EntityRef>);

pub(super) fn register_builtins(registry: &mut ComponentRegistry) {
    let name = ComponentOptions::new().name("Name");
    let transform = ComponentOptions::new().name("Transform");
    #[cfg(feature = "schema")]
    let (name, transform) = (
        name.json_schema::<Name>(),
        transform.json_schema::<Transform>(),
    );
    let results = [
        registry.insert::<Name>(name, false),
        registry.insert::<Transform>(transform, false),
        registry.insert::<Parent>(ComponentOptions::new().name("Parent"), true),
        registry.insert::<Children>(ComponentOptions::new().name("Children"), true),
        registry.insert::<StableId>(ComponentOptions::new().name("StableId"), true),
        registry.insert::<ArchetypeInstance>(
            ComponentOptions::new()
                .name("ArchetypeInstance")
                .runtime_only(),
            true,
        ),
    ];
    debug_assert!(results.iter().all(Result::is_ok), "built-ins clash");
}
