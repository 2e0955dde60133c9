//! The one context the library's serde impls read while an operation runs.
//!
//! Components stay plain serde types: a field of type [`EntityRef`](crate::EntityRef),
//! [`Shared<T>`](crate::Shared), [`ArchetypeRef`](crate::ArchetypeRef) or
//! [`AssetPath`](crate::AssetPath) is written and read differently in an archetype file, a
//! scene or the game's own `serde_json::to_value`, and serde gives a `Serialize` or
//! `Deserialize` impl no way to receive that context but the thread it runs on. So an
//! operation (spawning, saving or loading a scene, checking a value) installs the parts it needs
//! with [`scoped`] for exactly the duration of its work, and gets each part back, with what it
//! recorded, when the work ends. [`scoped`] is the only place a part is entered or left, and
//! restores what it replaced even if the work panics, so operations nest.
//!
//! Each part has its own cell, so a part's user may use another part while it holds its own
//! (a shared value being built reads entity references). One part is not read by serde but by
//! the scene loader, for the same reason of reach: the progress of a scene being prepared.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::component::entity_ref::EntityMapper;
use crate::component::map_error::MapError;
use crate::component::shared::SharedContext;

/// The parts of the context its users borrow, each in its own cell.
pub(crate) struct SerdeContext {
    mapper: RefCell<Option<Box<dyn EntityMapper>>>,
    reference_error: RefCell<Option<MapError>>,
    shared: RefCell<Option<SharedContext>>,
    references: RefCell<Option<Rc<dyn Any>>>,
    progress: RefCell<Option<Box<dyn Any>>>,
}

/// The context's flags: plain bits, read and switched around every value a check or a save
/// writes, so they live apart from the cells (a thread-local without a destructor is the
/// cheapest to reach).
#[derive(Clone, Copy)]
pub(crate) struct Flags {
    raw_bits: bool,
    recording: bool,
}

thread_local! {
    static CONTEXT: SerdeContext = const {
        SerdeContext {
            mapper: RefCell::new(None),
            reference_error: RefCell::new(None),
            shared: RefCell::new(None),
            references: RefCell::new(None),
            progress: RefCell::new(None),
        }
    };
    static FLAGS: Cell<Flags> = const {
        Cell::new(Flags {
            raw_bits: false,
            recording: false,
        })
    };
}

/// One part of the context: what it holds, and how it is switched.
pub(crate) trait Part: 'static {
    /// What the part holds; its default is "not installed".
    type Value: Default + 'static;
    /// Puts `value` in the part on this thread; returns what it held.
    fn replace(value: Self::Value) -> Self::Value;
}

/// A part held in a cell, which its users borrow ([`with`]).
pub(crate) trait CellPart: Part {
    /// The part's cell.
    fn cell(context: &SerdeContext) -> &RefCell<Self::Value>;
}

/// A part that is a flag, read with [`flag`].
pub(crate) trait FlagPart: Part<Value = bool> {
    /// The flag's bit in `flags`.
    fn bit(flags: &mut Flags) -> &mut bool;
}

macro_rules! cell_parts {
    ($($(#[$doc:meta])* $part:ident: $value:ty = $field:ident;)*) => {$(
        $(#[$doc])*
        pub(crate) struct $part;

        impl Part for $part {
            type Value = $value;
            fn replace(value: $value) -> $value {
                CONTEXT.with(|context| context.$field.replace(value))
            }
        }

        impl CellPart for $part {
            fn cell(context: &SerdeContext) -> &RefCell<$value> {
                &context.$field
            }
        }
    )*};
}

macro_rules! flag_parts {
    ($($(#[$doc:meta])* $part:ident = $field:ident;)*) => {$(
        $(#[$doc])*
        pub(crate) struct $part;

        impl Part for $part {
            type Value = bool;
            fn replace(value: bool) -> bool {
                FLAGS.with(|flags| {
                    let mut all = flags.get();
                    let previous = std::mem::replace(Self::bit(&mut all), value);
                    flags.set(all);
                    previous
                })
            }
        }

        impl FlagPart for $part {
            fn bit(flags: &mut Flags) -> &mut bool {
                &mut flags.$field
            }
        }
    )*};
}

cell_parts! {
    /// Turns entities into their written form and back ([`EntityRef`](crate::EntityRef));
    /// none: raw entity bits.
    Mapper: Option<Box<dyn EntityMapper>> = mapper;
    /// Why the last reference could not be read: formats that drop custom error messages
    /// (postcard says only "Serde Deserialization Error") get it back from here.
    ReferenceError: Option<MapError> = reference_error;
    /// A scene's table of shared values ([`Shared<T>`](crate::Shared)) being written or read,
    /// or a layout being traced.
    SharedValues: Option<SharedContext> = shared;
    /// What checked references (archetype names, asset paths) are checked against: the
    /// archetype subsystem's `ReferenceContext`.
    References: Option<Rc<dyn Any>> = references;
    /// Where the loader reports how far it has read, and learns that it was cancelled: the
    /// scene subsystem's `PrepareProgress`, while a scene is prepared on this thread.
    Progress: Option<Box<dyn Any>> = progress;
}

flag_parts! {
    /// Set while a value is checked, not written: references are written as raw bits,
    /// whatever mapper is installed, and never fail.
    RawBits = raw_bits;
    /// Whether serializations now go to a scene's output (and so mark their shared keys
    /// used); switched around every value a save writes.
    Recording = recording;
}

/// Runs `f` with part `P` holding `value`, then puts back what it held before (even if `f`
/// panics) and returns, beside `f`'s result, what the part held when `f` ended.
pub(crate) fn scoped<P: Part, R>(value: P::Value, f: impl FnOnce() -> R) -> (R, P::Value) {
    struct Restore<P: Part>(Option<P::Value>);
    impl<P: Part> Drop for Restore<P> {
        fn drop(&mut self) {
            if let Some(previous) = self.0.take() {
                P::replace(previous);
            }
        }
    }
    let mut restore = Restore::<P>(Some(P::replace(value)));
    let result = f();
    let ours = P::replace(restore.0.take().unwrap_or_default());
    (result, ours)
}

/// Gives `f` part `P`'s cell on this thread.
pub(crate) fn with<P: CellPart, R>(f: impl FnOnce(&RefCell<P::Value>) -> R) -> R {
    CONTEXT.with(|context| f(P::cell(context)))
}

/// Whether flag `P` is set on this thread.
pub(crate) fn flag<P: FlagPart>() -> bool {
    FLAGS.with(|flags| *P::bit(&mut flags.get()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_restores_what_it_replaced_and_returns_what_it_left() {
        let (inner, outer) = scoped::<ReferenceError, _>(Some(MapError::OutsideScene), || {
            let ((), inner) = scoped::<ReferenceError, _>(Some(MapError::NotRead), || {
                with::<ReferenceError, _>(|cell| *cell.borrow_mut() = Some(MapError::NotPrepared));
            });
            assert_eq!(
                with::<ReferenceError, _>(|cell| cell.borrow().clone()),
                Some(MapError::OutsideScene)
            );
            inner
        });
        assert_eq!(inner, Some(MapError::NotPrepared));
        assert_eq!(outer, Some(MapError::OutsideScene));
        assert_eq!(
            with::<ReferenceError, _>(|cell| cell.borrow().clone()),
            None
        );
    }

    #[test]
    fn a_scope_is_left_when_its_work_panics() {
        let result =
            std::panic::catch_unwind(|| scoped::<RawBits, _>(true, || panic!("work failed")));
        assert!(result.is_err());
        assert!(!flag::<RawBits>());
    }
}
