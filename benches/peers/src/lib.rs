//! Peer benches only; see benches/.
