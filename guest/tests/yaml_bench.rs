//! Throughput of the YAML path on the real streams, in MiB/s of YAML bytes. Speed is
//! never asserted (shared machines are noisy); run with
//! `cargo test -p render-store-guest --release --test yaml_bench -- --ignored --nocapture`.

use render_store_guest::yaml_render_ref;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[test]
#[ignore]
fn yaml_render_ref_throughput() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/real-renders");
    for name in [
        "ingress-nginx-cloud",
        "metallb-native",
        "calico",
        "grafana-dashboards",
    ] {
        let stream = std::fs::read(dir.join(format!("{name}.yaml"))).unwrap();
        yaml_render_ref(&stream).unwrap();
        // The best of several timed runs of at least 0.3 s each: the least disturbed one.
        let mut best = 0f64;
        for _ in 0..5 {
            let (mut n, start) = (0u32, Instant::now());
            while start.elapsed() < Duration::from_millis(300) {
                std::hint::black_box(yaml_render_ref(std::hint::black_box(&stream)).unwrap());
                n += 1;
            }
            let rate = stream.len() as f64 * f64::from(n) / start.elapsed().as_secs_f64();
            best = best.max(rate / (1024.0 * 1024.0));
        }
        println!("{name:<22} {:>7} KB {best:>8.1} MiB/s", stream.len() / 1024);
    }
}
