//! [`ComponentOps`]: everything the library does with a component type it does not know
//! statically, one trait per subsystem that uses it ([`ValueOps`] for archetype values,
//! [`EntityOps`] for building and editing entities, [`SceneOps`] for scene files,
//! [`ReloadOps`] for hot reload), all implemented by [`Ops<T>`] for each registered type.

use std::any::Any;
use std::sync::OnceLock;

use crate::component::entity_ops::EntityOps;
use crate::component::registry::Component;
use crate::component::reload_ops::ReloadOps;
use crate::component::scene_ops::SceneOps;
use crate::component::value_layout::Layout;
use crate::component::value_ops::ValueOps;
use crate::json::{probe, DeclaredAxes, Shape};

/// A component value deserialized from data, ready to be cloned into entities.
pub(crate) type TypedValue = Box<dyn Any + Send + Sync>;

/// Every operation on a registered component type: what the registry hands out
/// ([`ComponentRegistry::ops`](crate::ComponentRegistry)).
pub(crate) trait ComponentOps:
    ValueOps + EntityOps + SceneOps + ReloadOps + Send + Sync
{
}

impl<O: ValueOps + EntityOps + SceneOps + ReloadOps + Send + Sync> ComponentOps for O {}

/// The operations of component type `T`.
pub(super) struct Ops<T> {
    /// `T` is a unit struct (a marker): JSON scenes write it `{}`, as archetype files do,
    /// since `null` in a scene entry means "removed".
    pub(super) marker: bool,
    /// The fields its options name the axes of ([`ComponentOptions::axes`](crate::ComponentOptions::axes)).
    pub(super) axes: Vec<DeclaredAxes>,
    /// The layout of its binary form, traced on first use, then kept (see
    /// [`ValueOps::layout`]).
    pub(super) layout: OnceLock<Option<Layout>>,
    _type: std::marker::PhantomData<fn() -> T>,
}

impl<T: Component> Ops<T> {
    pub(super) fn new(axes: Vec<DeclaredAxes>) -> Self {
        Ops {
            marker: matches!(probe::<T>(&[]), Some(Shape::Unit { .. })),
            axes,
            layout: OnceLock::new(),
            _type: std::marker::PhantomData,
        }
    }

    /// For a marker written `{}` (any spacing), the text serde reads it from (`null`).
    pub(super) fn marker_text<'t>(&self, text: &'t str) -> &'t str {
        match self.marker && is_empty_object(text) {
            true => "null",
            false => text,
        }
    }
}

/// Whether `text` is `{}`, with any whitespace around and inside.
fn is_empty_object(text: &str) -> bool {
    text.trim()
        .strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|inside| inside.trim().is_empty())
}

impl<T: Component> Ops<T> {
    pub(super) fn typed(value: &TypedValue) -> Option<&T> {
        let typed = value.downcast_ref::<T>();
        debug_assert!(typed.is_some(), "component value of the wrong type");
        typed
    }
}
