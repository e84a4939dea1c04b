//! floe-linux's one integration-test binary: its mechanisms on the real kernel
//! (`kernel`) and process_madvise with zram swap (`zram`).

mod kernel;
mod zram;
