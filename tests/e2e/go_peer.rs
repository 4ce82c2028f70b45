//! The bench's Go peer and the guest agree with `tests/real-renders/expected.json` on
//! every real render. The Go half runs where Go and Debian's YAML sources are installed
//! (see `benches/go-peer/driver.rs`); elsewhere it says so and passes, unless
//! RENDER_STORE_REQUIRE_GO=1, where a missing Go is a failure (so a machine that is
//! meant to have Go cannot skip it unnoticed).

// Relative to tests/e2e/; the differential tests use it too.
#[path = "../benches/go-peer/driver.rs"]
pub(crate) mod driver;

#[test]
fn go_peer_gives_the_expected_render_refs() {
    let peer = match driver::GoPeer::build() {
        Ok(peer) => peer,
        Err(why) if driver::go_required() => {
            panic!(
                "{}=1 but the Go peer is not available: {why}",
                driver::REQUIRE_GO
            )
        }
        Err(why) => {
            eprintln!("Go peer not checked: {why}");
            return;
        }
    };
    let renders = driver::real_renders();
    assert_eq!(renders.len(), 5);
    for r in &renders {
        assert_eq!(
            peer.json_ref(&r.json_files),
            r.render_ref,
            "{} (JSON)",
            r.name
        );
        assert_eq!(peer.yaml_ref(&r.yaml), r.render_ref, "{} (YAML)", r.name);
    }
}

#[test]
fn the_guest_gives_the_expected_render_refs_of_the_json_objects() {
    for r in driver::real_renders() {
        let objects = r.objects();
        let canonical = render_store_guest::canonical(&objects).unwrap();
        assert_eq!(canonical.len(), r.canonical_bytes, "{}", r.name);
        assert_eq!(
            render_store_guest::render_ref(&objects).unwrap(),
            r.render_ref,
            "{}",
            r.name
        );
    }
}
