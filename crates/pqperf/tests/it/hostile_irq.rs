//! Interrupt work on the measuring CPU (issue 36). This kind of kernel (no
//! `CONFIG_IRQ_TIME_ACCOUNTING`) charges hard- and soft-interrupt work to whichever task runs
//! on the CPU, so an honest window can hold more CPU time than its claim and the tolerances
//! allow. The parent reads the measuring CPU's softirq count at every gate
//! (`kernel_check.window_softirqs`); a window over its bound whose softirqs explain the
//! excess makes the attempt `disturbed` (re-run, never published), never `inconsistent`.
//!
//! The test measures the honest toy signature and a consistent forgery (`rewrite.h` in its
//! `REWRITE_CPU` mode: every interval claimed at 90 % of the CPU time its calls took) while
//! direct (`O_DIRECT`) disk reads run on another CPU: the disk's completions are interrupts
//! and `BLOCK` softirqs on the CPU the device's interrupt is routed to, on the development
//! VM the measuring CPU (the figures printed say how many reached it). The honest candidate
//! is never `inconsistent` (complete, or disturbed where interrupts explain an excess); the
//! forgery is never complete. No timing is asserted; what the load did is printed.

use crate::common;
use crate::hostile_timing::{campaign, record, scaled_lines, short_trials};

use std::process::{Child, Command};

use common::toy::{Lib, TOY_SIG, toy_run};

const REWRITE: &str = include_str!("../../../../testdata/hostile/rewrite.h");

/// Direct reads of a file in a loop, pinned to a CPU; killed (by its id) when dropped.
struct DiskLoad(Child);

impl DiskLoad {
    /// Starts the loop on `cpu` reading `file` with `O_DIRECT` (4 KiB blocks); `None` when
    /// the file system refuses direct I/O (tmpfs).
    fn start(cpu: usize, file: &std::path::Path) -> Option<DiskLoad> {
        let probe = Command::new("dd")
            .arg(format!("if={}", file.display()))
            .args([
                "of=/dev/null",
                "bs=4k",
                "count=1",
                "iflag=direct",
                "status=none",
            ])
            .status()
            .ok()?;
        if !probe.success() {
            return None;
        }
        let script = format!(
            "while :; do dd if='{}' of=/dev/null bs=4k count=2048 iflag=direct status=none || exit 1; done",
            file.display()
        );
        Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", &script])
            .spawn()
            .ok()
            .map(DiskLoad)
    }
}

impl Drop for DiskLoad {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Interrupt and softirq events on `cpu` per second over `secs`.
fn irq_rate(cpu: usize, secs: f64) -> Option<f64> {
    let mut r = pqperf_ffi::procinfo::IrqReader::new(cpu);
    let a = r.read()?;
    std::thread::sleep(std::time::Duration::from_secs_f64(secs));
    Some(r.read()?.events_since(&a) as f64 / secs)
}

#[test]
fn interrupt_work_on_the_measuring_cpu_never_makes_an_honest_process_inconsistent() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("rewrite.h"), REWRITE).unwrap();
    let source = format!("#ifdef REWRITE\n#include \"rewrite.h\"\n#endif\n{TOY_SIG}");
    toy_run(
        &run,
        "toy_sig_irq.c",
        &source,
        &[
            Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"]),
            // Calls of well under a microsecond: its sampled trials (400 calls) are windows
            // of a few hundred µs, mostly the driver's untimed work, where interrupt work is
            // not inside the claim (the case seen failing before: 623 µs for 21 µs claimed).
            Lib::new("sign-95", "tiny").defines(&["TOY_WORK=50"]),
            Lib::new("sign-95", "minus10")
                .defines(&["TOY_WORK=20000", "REWRITE", "REWRITE_CPU", "REWRITE_PCT=90"])
                .args(&["-lpthread"]),
        ],
    );
    // 16 MiB read directly, block by block, from a CPU other than the measuring one.
    let blob = tmp.path().join("blob");
    std::fs::write(&blob, vec![0x5a_u8; 16 << 20]).unwrap();
    let mut opts = short_trials();
    let at = opts.iter().position(|o| o == "--cpu").unwrap();
    let cpu: usize = opts[at + 1].parse().unwrap();
    // 200 ms trials. The reference plan sizes a trial from one cold calibration call, which a
    // busy host makes several times slower than the warm calls (the suite once planned 7 ms
    // windows from a 50 ms target): its windows stay long enough that the forgery hides more
    // than the fixed tolerance and the interrupts' cap (2.5 ms) in each.
    let at = opts.iter().position(|o| o == "--trial-target").unwrap();
    opts[at + 1] = "0.2".into();
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let other = pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .into_iter()
        .find(|c| *c != cpu);
    let quiet_rate = irq_rate(cpu, 0.5);
    let mut log = String::new();
    let mut reader = pqperf_ffi::procinfo::IrqReader::new(cpu);
    let (load_rate, campaign_events, campaign_s) = {
        let load = other.and_then(|o| DiskLoad::start(o, &blob));
        let load_rate = load.as_ref().and_then(|_| irq_rate(cpu, 0.5));
        let t0 = std::time::Instant::now();
        let before = reader.read();
        for phase in ["calibrate", "measure"] {
            let out = campaign(&run, phase, &opts).output().unwrap();
            log += &String::from_utf8_lossy(&out.stderr);
        }
        let events = before.zip(reader.read()).map(|(a, b)| b.events_since(&a));
        (load_rate, events, t0.elapsed().as_secs_f64())
    };
    eprintln!(
        "interrupt load on CPU {cpu}: {quiet_rate:?} events/s before, {load_rate:?} events/s with the direct reads on CPU {other:?}; {campaign_events:?} events in the {campaign_s:.1} s campaign"
    );
    // What one reading at a gate costs the parent (`/proc/softirqs`, the measuring CPU's
    // column), and what `/proc/interrupts` would add.
    let cost = |f: &mut dyn FnMut()| {
        let (n, t) = (1000, std::time::Instant::now());
        (0..n).for_each(|_| f());
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    };
    let soft_us = cost(&mut || {
        std::hint::black_box(reader.softirqs());
    });
    let both_us = cost(&mut || {
        std::hint::black_box(reader.read());
    });
    eprintln!(
        "softirq count read at a gate: {soft_us:.1} µs per reading (mean of 1000, under the load); with /proc/interrupts {both_us:.1} µs"
    );
    let ops = ["keygen", "sign", "verify"];
    let (mut attempts, mut disturbed, mut over, mut windows) = (0, 0, 0, 0);
    let mut refused: Vec<String> = Vec::new();
    // Per kept window: CPU time beyond the claim (µs) and softirqs.
    let (mut untimed, mut events): (Vec<f64>, Vec<u64>) = (Vec::new(), Vec::new());
    for (label, op) in ["honest", "tiny"].iter().flat_map(|l| ops.map(|o| (*l, o))) {
        let r = record(&run, "sign-95", label, op);
        let all = r["pqperf"]["attempts"].as_array().unwrap();
        for a in all {
            attempts += 1;
            disturbed += usize::from(a["status"] == "disturbed");
            if a["status"] == "inconsistent" {
                // Work the counts cannot explain (an inter-processor interrupt, a timer tick:
                // docs/threat-model.md) can still refuse one honest attempt on a busy host.
                // It is re-run and never named on the page: the process must have a later
                // attempt that was kept, and the refusal keeps its reason.
                refused.push(format!("{label} {op}: {}", a["problems"]));
                assert!(
                    all.iter().any(|b| b["process"] == a["process"]
                        && b["attempt"].as_u64() > a["attempt"].as_u64()
                        && b["kept"] == true),
                    "{label} {op}: a refused attempt without a kept re-run: {a}\n{r}\n{log}"
                );
            }
        }
        for p in r["processes"].as_array().unwrap() {
            assert!(
                p["status"] == "complete" || p["status"] == "disturbed",
                "{label} {op}: {p}"
            );
            assert_eq!(p["kernel_check"]["problems"], serde_json::json!([]), "{p}");
            let Ok(Some(w)) = pqperf_model::kernelcheck::Windows::of(&p["kernel_check"]) else {
                panic!("no windows: {p}");
            };
            assert!(w.unexplained().is_empty(), "{:?}: {p}", w.unexplained());
            for (c, k) in w.cpu_s.iter().zip(&w.claimed_s) {
                untimed.push((c - k) * 1e6);
            }
            events.extend(w.softirqs.iter().flatten());
            let x = w.excess_s();
            windows += x.len();
            over += x.iter().filter(|e| **e > 0.0).count();
        }
        assert!(
            r["status"] == "complete"
                || r["processes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["status"] == "disturbed"),
            "{label} {op}: {r}\n{log}"
        );
    }
    let range = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (
            v.first().copied(),
            v.get(v.len() / 2).copied(),
            v.last().copied(),
        )
    };
    let mut ev: Vec<f64> = events.iter().map(|e| *e as f64).collect();
    eprintln!(
        "honest and tiny: {attempts} attempts, {disturbed} disturbed by interrupts (inconsistent before issue 36's interrupt counts), {} refused and re-run {refused:?}; {over} of {windows} kept windows over the tight bound; CPU beyond the claim per window (min, median, max µs) {:?} against the {:.0} µs tolerance; softirqs per window {:?}",
        refused.len(),
        range(&mut untimed),
        pqperf_measure::verify::WINDOW_ABS_S * 1e6,
        range(&mut ev)
    );
    for op in ops {
        let r = record(&run, "sign-95", "minus10", op);
        let statuses: Vec<&str> = r["pqperf"]["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["status"].as_str().unwrap_or(""))
            .collect();
        eprintln!(
            "minus10 {op}: attempts {statuses:?}, record {}",
            r["status"]
        );
        // Its forged figure is never published: some attempt was caught (or disturbed,
        // where the interrupts could explain what it hid) and the record is not complete.
        assert_ne!(r["status"], "complete", "minus10 {op}: {r}");
        assert!(
            statuses
                .iter()
                .any(|s| *s == "inconsistent" || *s == "disturbed"),
            "minus10 {op}: {r}"
        );
        let p = &r["processes"][0];
        assert!(scaled_lines(p) > 0, "the rewrite ran: {p}");
    }
}
