//! The `archetool` binary.

fn main() {
    println!("archetool: not yet (the command line lands with issue 5, the demo with issue 6)");
}
