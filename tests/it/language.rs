//! The designer's language beyond plain merge patches: nothing hidden behind a
//! broken parent, abstract archetypes checked as far as they go, marker components, enum
//! variant switches, list and number operators, checked references and spawn-time variation.
//! Every error is asserted in full, with its file, line and column.

mod abstract_checks;
mod markers;
mod nothing_hidden;
mod operators;
mod references;
mod variants;
mod variation;
mod vectors;
