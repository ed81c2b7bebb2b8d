"""Stage 3: emitters turn the IR into file contents (one emitter per artifact)."""
