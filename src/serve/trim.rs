//! Memory given back to the system after a burst of heavy renders (issue 28, item 8).
//!
//! glibc's allocator keeps the memory a program frees for its next allocations: after 16
//! resume views of a large session, `serve` stayed at hundreds of megabytes with nothing
//! left to hold. `malloc_trim(0)` returns the free pages of every arena to the system; it
//! is called when the last heavy render ends ([`super::heavy`]), so a server between bursts
//! is back to its resting size. Elsewhere (musl, macOS, Windows) it does nothing: those
//! allocators give memory back by themselves or have no such call.

/// Gives the allocator's free memory back to the system (glibc only).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release_free_memory() {
    extern "C" {
        /// glibc, `<malloc.h>`: releases free memory at the top of the heap and free pages
        /// inside every arena; answers 1 when some memory was released.
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: malloc_trim takes a plain size, touches only the allocator's own free lists
    // (under its locks) and may be called from any thread at any time.
    unsafe {
        malloc_trim(0);
    }
}

/// Gives the allocator's free memory back to the system (glibc only).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_memory() {}
