//! The foreground's memory churn while it renders (a workload's `[foreground]` table):
//! fresh heap pages allocated by the render thread frame by frame and returned to the
//! kernel by each garbage collection, and content read through the page cache by an
//! I/O thread. Both keep memory in demand for as long as the app is used, where an app
//! that only grows to its footprint stops asking for memory once it is there.

use super::{Ctx, Sim, VSYNC};
use crate::config::Foreground;
use crate::pages::{Loc, F_LOCKED, F_REFERENCED, F_SHADOW, F_YOUNG};
use floe_core::Nanos;

/// Frames a second at 60 Hz, for per-frame shares of per-second rates.
const FPS: f64 = 1e9 / VSYNC.0 as f64;

/// One app's churn: its heap and content segments (page indices from the app's base,
/// after its anonymous and file ranges) and where it stands in them.
#[derive(Clone, Debug, Default)]
pub(super) struct Churn {
    /// First page of the heap segment and its length: the heap allocated between two
    /// collections.
    pub(super) heap0: u32,
    pub(super) heap_len: u32,
    /// Pages of the heap segment allocated since the last collection.
    pub(super) heap_used: u32,
    /// Collections so far.
    pub(super) collections: u32,
    /// First page of the content segment, its length and the next page to read.
    pub(super) content0: u32,
    pub(super) content_len: u32,
    pub(super) content_pos: u32,
    /// Buffer pages the scenario holds once it runs, and those it holds now.
    pub(super) buffers: u32,
    pub(super) buffers_held: u32,
    /// Heap pages and content pages owed per frame, and the fractions carried over.
    heap_per_frame: f64,
    read_per_frame: f64,
    heap_owed: f64,
    read_owed: f64,
}

impl Churn {
    /// The churn of an app under `f`, its segments starting at page `first` of the app.
    pub(super) fn new(f: &Foreground, first: u32) -> Churn {
        let heap_len = if f.heap_alloc_mib_s > 0.0 { super::pages_of(f.heap_free_mib) } else { 0 };
        let content_len = if f.read_mib_s > 0.0 { super::pages_of(f.content_mib) } else { 0 };
        Churn {
            heap0: first,
            heap_len,
            content0: first + heap_len,
            content_len,
            buffers: super::pages_of(f.buffers_mib),
            heap_per_frame: f.heap_alloc_mib_s * 256.0 / FPS,
            read_per_frame: f.read_mib_s * 256.0 / FPS,
            ..Churn::default()
        }
    }

    /// Pages the two segments take in the page table: (anonymous, file).
    pub(super) fn segments(f: &Foreground) -> (u32, u32) {
        let c = Churn::new(f, 0);
        (c.heap_len, c.content_len)
    }
}

impl Sim {
    /// One rendered frame's churn for `app`: the render thread allocates its share of
    /// fresh heap pages in `ctx` (an allocation below the min watermark reclaims
    /// directly and stalls the frame), collecting the heap when the segment is used
    /// up; the I/O thread reads its share of content on its own time, through the flash
    /// queue, so the frame waits for none of it.
    pub(super) fn churn_frame(&mut self, app: u16, ctx: &mut Ctx) {
        let Some(mut c) = self.apps[app as usize].churn.take() else {
            return;
        };
        let life = self.apps[app as usize].life;
        // The buffers come in over the first second of frames, each page taken from
        // free memory like any allocation (reclaiming directly below the min watermark).
        let want = (c.buffers_held + c.buffers.div_ceil(FPS as u32)).min(c.buffers);
        while c.buffers_held < want {
            self.alloc(ctx);
            if self.apps[app as usize].life != life {
                return;
            }
            c.buffers_held += 1;
            self.pinned += 1;
        }
        c.heap_owed += c.heap_per_frame;
        while c.heap_len > 0 && c.heap_owed >= 1.0 {
            if c.heap_used == c.heap_len {
                self.collect_heap(app, &mut c);
            }
            let i = c.heap0 + c.heap_used;
            c.heap_used += 1;
            c.heap_owed -= 1.0;
            self.touch(app, i, ctx);
            if self.apps[app as usize].life != life {
                return;
            }
        }
        c.read_owed += c.read_per_frame;
        let mut io = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        while c.content_len > 0 && c.read_owed >= 1.0 {
            let i = c.content0 + c.content_pos;
            c.content_pos = (c.content_pos + 1) % c.content_len;
            c.read_owed -= 1.0;
            self.touch(app, i, &mut io);
            if self.apps[app as usize].life != life {
                return;
            }
        }
        // The I/O thread's CPU (faults, reclaim it did) is the app's, run beside the frame.
        self.c.cpu_app_ns += io.cpu.0;
        self.apps[app as usize].churn = Some(c);
    }

    /// A garbage collection: the heap pages allocated since the last one are returned
    /// to the kernel (freed wherever they are: resident, in zram or in flash swap),
    /// leaving no shadow entry, as memory an app gives back is not a reclaim.
    fn collect_heap(&mut self, app: u16, c: &mut Churn) {
        let base = self.apps[app as usize].base;
        for p in base + c.heap0..base + c.heap0 + c.heap_used {
            self.release(p);
        }
        c.heap_used = 0;
        c.collections += 1;
    }

    /// Frees page `p` of a live or dying app's anonymous memory, whatever holds it.
    pub(super) fn release(&mut self, p: u32) {
        match self.pages.loc(p) {
            Loc::Zram => self.zram_stored -= 1,
            Loc::Flash => self.flash_used -= 1,
            _ if self.pages.in_swap_cache(p) => self.flash_used -= 1,
            _ => {}
        }
        self.pages.move_to(p, Loc::Absent);
        self.pages.set_flag(p, F_SHADOW | F_YOUNG | F_REFERENCED | F_LOCKED, false);
    }

    /// The app left the foreground: the scenario's buffers are freed.
    pub(super) fn churn_pause(&mut self, app: u16) {
        if let Some(c) = self.apps[app as usize].churn.as_mut() {
            self.pinned -= i64::from(c.buffers_held);
            c.buffers_held = 0;
        }
    }

    /// The process died: its heap segment and buffers are freed with the rest of its
    /// anonymous memory (its content stays in the page cache, as file pages do).
    pub(super) fn churn_forget(&mut self, app: u16) {
        self.churn_pause(app);
        let Some(mut c) = self.apps[app as usize].churn.take() else {
            return;
        };
        self.collect_heap(app, &mut c);
        self.apps[app as usize].churn = Some(c);
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{embedded_sim, pages_of, RunOptions};
    use crate::pages::Loc;
    use floe_core::Nanos;

    /// The video call's churn: its buffers are held off the LRU once it renders, its
    /// heap is collected over and over, never holding more than a collection's worth of
    /// pages, and its content comes in through the page cache; the buffers are freed
    /// when the call leaves the foreground.
    #[test]
    fn the_call_holds_its_buffers_collects_its_heap_and_reads_its_content() {
        let opts = RunOptions { seed: 1, bg_apps: Some(0), ..Default::default() };
        let mut sim = embedded_sim("p20", "ice-video-call", "lru-cfs", &opts);
        sim.run_until(Nanos::from_secs_f64(20.0));
        let app = sim.fg.expect("the call is in the foreground");
        let c = sim.apps[app as usize].churn.clone().expect("the call churns");
        assert_eq!(sim.pinned, i64::from(pages_of(240.0)));
        assert_eq!(c.buffers_held, c.buffers);
        // 16 MiB/s at 60 frames a second is 11 MiB/s at the call's 42: about 18 s of
        // frames make six or seven 32 MiB collections.
        assert!((5..=8).contains(&c.collections), "{} collections", c.collections);
        let base = sim.apps[app as usize].base;
        let heap = (base + c.heap0..base + c.heap0 + c.heap_len).filter(|&p| sim.pages.loc(p) != Loc::Absent).count() as u32;
        assert!(heap <= c.heap_used && c.heap_used <= c.heap_len, "{heap} heap pages held, {} allocated", c.heap_used);
        // 1.1 MiB/s of content (at 60 frames a second) for about 18 s, all of it still
        // cached (memory is ample).
        let cached = (base + c.content0..base + c.content0 + c.content_len).filter(|&p| sim.pages.loc(p).resident()).count() as u32;
        assert!(cached >= c.content_pos && c.content_pos > pages_of(1.1 * 10.0), "{cached} cached, read up to {}", c.content_pos);
        sim.check_invariants().unwrap();
        sim.send_to_background(app);
        assert_eq!(sim.pinned, 0);
        sim.check_invariants().unwrap();
    }
}
