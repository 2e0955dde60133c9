//! A scene's size limits as every reader counts against them (the careful readers refuse at
//! the entry or value over a limit, placed; the fast ones give up there): one copy of the rule
//! of [`Limits::max_scene_entities`] and [`Limits::max_scene_values`].

use crate::limits::Limits;

/// Which limit a scene went over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OverLimit {
    /// More entries than [`Limits::max_scene_entities`].
    Entities,
    /// More component values than [`Limits::max_scene_values`].
    Values,
}

impl OverLimit {
    /// `scene has more entities than the limit of 10`, or the same of component values.
    pub fn message(self, limits: &Limits) -> String {
        let (what, limit) = match self {
            OverLimit::Entities => ("entities", limits.max_scene_entities),
            OverLimit::Values => ("component values", limits.max_scene_values),
        };
        format!("scene has more {what} than the limit of {limit}")
    }
}

/// How many more entries and component values a scene may hold.
#[derive(Clone, Copy)]
pub(super) struct SceneBudget {
    entities: usize,
    values: usize,
}

impl SceneBudget {
    /// The whole budget `limits` allow.
    pub fn new(limits: &Limits) -> Self {
        SceneBudget {
            entities: limits.max_scene_entities,
            values: limits.max_scene_values,
        }
    }

    /// Whether another entry would go over the limit.
    #[inline]
    pub fn entities_spent(&self) -> bool {
        self.entities == 0
    }

    /// Takes `count` entries from the budget (a reader that knows the count ahead takes them
    /// all at once); an error, with nothing taken, if there are not as many left.
    #[inline]
    pub fn take_entities(&mut self, count: usize) -> Result<(), OverLimit> {
        self.entities = (self.entities.checked_sub(count)).ok_or(OverLimit::Entities)?;
        Ok(())
    }

    /// Takes `count` component values from the budget; an error, with nothing taken, if there
    /// are not as many left.
    #[inline]
    pub fn take_values(&mut self, count: usize) -> Result<(), OverLimit> {
        self.values = (self.values.checked_sub(count)).ok_or(OverLimit::Values)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_up_to_the_limits_and_refuses_past_them() {
        let limits = Limits {
            max_scene_entities: 2,
            max_scene_values: 3,
            ..Limits::default()
        };
        let mut budget = SceneBudget::new(&limits);
        assert_eq!(budget.take_entities(1), Ok(()));
        assert!(!budget.entities_spent());
        assert_eq!(budget.take_entities(2), Err(OverLimit::Entities));
        assert_eq!(budget.take_entities(1), Ok(()));
        assert!(budget.entities_spent());
        assert_eq!(budget.take_values(3), Ok(()));
        assert_eq!(budget.take_values(1), Err(OverLimit::Values));
        assert_eq!(
            OverLimit::Values.message(&limits),
            "scene has more component values than the limit of 3"
        );
    }
}
