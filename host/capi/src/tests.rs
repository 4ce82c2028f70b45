//! Tests of the ABI, calling the exported functions as C would: errors and what they
//! carry, NULL and bad arguments, callbacks that do not answer or answer wrongly, a
//! panic inside the library, many threads on one handle, and the JSON shapes.

use crate::*;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a call returned: NULL, or the error's kind and message (freed).
fn check(e: *mut rs_error) -> Result<(), (i32, String)> {
    if e.is_null() {
        return Ok(());
    }
    // SAFETY: an error the library just returned.
    let out = unsafe { (rs_error_kind(e), message(e)) };
    unsafe { rs_error_free(e) };
    Err(out)
}

unsafe fn message(e: *const rs_error) -> String {
    let (mut p, mut n) = (null(), 0);
    // SAFETY: an unfreed error; the text lives until it is freed.
    unsafe {
        rs_error_message(e, &mut p, &mut n);
        String::from_utf8(std::slice::from_raw_parts(p, n).to_vec()).unwrap()
    }
}

fn ok(e: *mut rs_error) {
    if let Err((kind, m)) = check(e) {
        panic!("error {kind}: {m}");
    }
}

/// Takes a buffer's bytes and frees it.
fn take(mut b: rs_buf) -> Vec<u8> {
    let bytes = if b.data.is_null() {
        Vec::new()
    } else {
        // SAFETY: a buffer the library filled.
        unsafe { std::slice::from_raw_parts(b.data, b.len).to_vec() }
    };
    unsafe { rs_buf_free(&mut b) };
    bytes
}

fn take_text(b: rs_buf) -> String {
    String::from_utf8(take(b)).unwrap()
}

fn s(text: &str) -> (*const c_char, usize) {
    (text.as_ptr().cast(), text.len())
}

/// Objects joined, with their ends.
fn joined(objects: &[&str]) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for o in objects {
        bytes.extend_from_slice(o.as_bytes());
        ends.push(bytes.len());
    }
    (bytes, ends)
}

// ---- a bucket of callbacks over a map, with ways to misbehave ----

#[derive(Default)]
struct Mem {
    objects: Mutex<BTreeMap<String, Vec<u8>>>,
    /// What the get callback does: 0 answers, 1 does not, 2 answers a size, 3 keeps the
    /// handle and answers after returning, 4 answers twice, 5 calls the store.
    get_mode: AtomicUsize,
    kept: Mutex<Option<usize>>,
    second_answer: Mutex<Option<bool>>,
    nested: Mutex<Option<(i32, String)>>,
    store: AtomicUsize,
    calls: AtomicUsize,
    dropped: AtomicUsize,
}

unsafe fn mem<'a>(data: *mut c_void) -> &'a Mem {
    // SAFETY: every test bucket's user_data is a leaked `Mem`.
    unsafe { &*(data as *const Mem) }
}

unsafe fn key(k: *const c_char, n: usize) -> String {
    // SAFETY: the library lends `n` bytes of UTF-8.
    unsafe { String::from_utf8(std::slice::from_raw_parts(k.cast(), n).to_vec()).unwrap() }
}

unsafe extern "C" fn get(
    d: *mut c_void,
    k: *const c_char,
    n: usize,
    limit: u64,
    a: *mut rs_answer,
) {
    // SAFETY: the library's arguments.
    let (m, k) = unsafe { (mem(d), key(k, n)) };
    m.calls.fetch_add(1, Ordering::Relaxed);
    let objects = m.objects.lock().unwrap();
    let value = objects.get(&k).cloned();
    drop(objects);
    unsafe {
        match m.get_mode.load(Ordering::Relaxed) {
            1 => {}
            2 => {
                rs_answer_size(a, 3);
            }
            3 => *m.kept.lock().unwrap() = Some(a as usize),
            4 => {
                rs_answer_not_found(a);
                *m.second_answer.lock().unwrap() = Some(rs_answer_not_found(a));
            }
            5 => {
                let store = m.store.load(Ordering::Relaxed) as *const rs_store;
                let (ns, nl) = s("ns");
                let (na, nal) = s("app");
                let mut recorded = false;
                let e = rs_store_has_history_ref(
                    store,
                    ns,
                    nl,
                    na,
                    nal,
                    null(),
                    0,
                    &mut recorded,
                    null_mut(),
                );
                *m.nested.lock().unwrap() = check(e).err();
                rs_answer_not_found(a);
            }
            _ => match value {
                None => {
                    rs_answer_not_found(a);
                }
                Some(v) if v.len() as u64 > limit => {
                    rs_answer_too_large(a, v.len() as u64);
                }
                Some(v) => {
                    rs_answer_bytes(a, v.as_ptr(), v.len());
                }
            },
        }
    }
}

unsafe extern "C" fn put(
    d: *mut c_void,
    k: *const c_char,
    n: usize,
    v: *const u8,
    vn: usize,
    a: *mut rs_answer,
) {
    // SAFETY: the library's arguments.
    unsafe {
        let m = mem(d);
        m.calls.fetch_add(1, Ordering::Relaxed);
        let value = std::slice::from_raw_parts(v, vn).to_vec();
        m.objects.lock().unwrap().insert(key(k, n), value);
        rs_answer_ok(a);
    }
}

unsafe extern "C" fn exists(d: *mut c_void, k: *const c_char, n: usize, a: *mut rs_answer) {
    // SAFETY: the library's arguments.
    unsafe {
        let m = mem(d);
        m.calls.fetch_add(1, Ordering::Relaxed);
        match m.objects.lock().unwrap().get(&key(k, n)) {
            Some(v) => rs_answer_size(a, v.len() as u64),
            None => rs_answer_not_found(a),
        };
    }
}

unsafe extern "C" fn list(d: *mut c_void, k: *const c_char, n: usize, a: *mut rs_answer) {
    // SAFETY: the library's arguments.
    unsafe {
        let m = mem(d);
        m.calls.fetch_add(1, Ordering::Relaxed);
        let prefix = key(k, n);
        // Newest first: the library sorts.
        for (key, v) in m.objects.lock().unwrap().iter().rev() {
            if key.starts_with(&prefix) {
                rs_answer_listed(
                    a,
                    key.as_ptr().cast(),
                    key.len(),
                    v.len() as u64,
                    1_700_000_000,
                    0,
                );
            }
        }
        rs_answer_ok(a);
    }
}

unsafe extern "C" fn delete(d: *mut c_void, k: *const c_char, n: usize, a: *mut rs_answer) {
    // SAFETY: the library's arguments.
    unsafe {
        let m = mem(d);
        m.calls.fetch_add(1, Ordering::Relaxed);
        m.objects.lock().unwrap().remove(&key(k, n));
        rs_answer_ok(a);
    }
}

unsafe extern "C" fn dropped(d: *mut c_void) {
    // SAFETY: the leaked Mem, which the test still holds.
    unsafe { mem(d) }.dropped.fetch_add(1, Ordering::Relaxed);
}

fn bucket_of(m: &'static Mem) -> rs_bucket {
    rs_bucket {
        size: size_of::<rs_bucket>(),
        user_data: m as *const Mem as *mut c_void,
        get: Some(get),
        put: Some(put),
        exists: Some(exists),
        list: Some(list),
        delete_key: Some(delete),
        delete_many: None,
        drop: Some(dropped),
    }
}

fn new_store(m: &'static Mem, options: *const rs_options) -> *mut rs_store {
    let mut store = null_mut();
    ok(unsafe { rs_store_new(&bucket_of(m), options, &mut store) });
    m.store.store(store as usize, Ordering::Relaxed);
    store
}

fn leak() -> &'static Mem {
    Box::leak(Box::default())
}

const CM: &str = r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}"#;

fn put_render(store: *const rs_store, ns: &str, objects: &[&str]) -> Result<String, (i32, String)> {
    let (bytes, ends) = joined(objects);
    let (n, nl) = s(ns);
    let (a, al) = s("app");
    let mut out = rs_buf::EMPTY;
    check(unsafe {
        rs_store_put_render(
            store,
            n,
            nl,
            a,
            al,
            bytes.as_ptr(),
            bytes.len(),
            ends.as_ptr(),
            ends.len(),
            &mut out,
            null_mut(),
        )
    })?;
    Ok(take_text(out))
}

fn get_render(store: *const rs_store, ns: &str, r: &str) -> Result<Vec<u8>, (i32, String)> {
    let (n, nl) = s(ns);
    let (a, al) = s("app");
    let (r, rl) = s(r);
    let mut out = rs_buf::EMPTY;
    check(unsafe { rs_store_get_render(store, n, nl, a, al, r, rl, &mut out, null_mut()) })?;
    Ok(take(out))
}

// ---- errors and what they carry ----

#[test]
fn errors_carry_their_kind_message_and_position() {
    let store = new_store(leak(), null());
    // A bad namespace: invalid input, before any bucket call.
    let (kind, m) = put_render(store, "Not_A_Label", &[CM]).unwrap_err();
    assert_eq!(kind, RS_ERROR_INVALID_INPUT, "{m}");
    assert!(m.starts_with("invalid input: "), "{m}");

    // A bad object: its index.
    let (bytes, ends) = joined(&[CM, "[1]"]);
    let mut out = rs_buf::EMPTY;
    let e = unsafe {
        rs_render_ref(
            null(),
            bytes.as_ptr(),
            bytes.len(),
            ends.as_ptr(),
            2,
            &mut out,
        )
    };
    let mut index = 99;
    assert_eq!(unsafe { rs_error_kind(e) }, RS_ERROR_INVALID_OBJECT);
    assert!(unsafe { rs_error_object_index(e, &mut index) });
    assert_eq!(index, 1);
    assert!(!unsafe { rs_error_yaml(e, null_mut(), null_mut(), null_mut(), null_mut()) });
    let (mut p, mut n) = (null(), 0);
    unsafe { rs_error_detail(e, &mut p, &mut n) };
    let detail = unsafe { std::str::from_utf8(std::slice::from_raw_parts(p, n)).unwrap() };
    assert!(
        !detail.starts_with("object 1"),
        "the detail is the component's own: {detail}"
    );
    assert_eq!(
        unsafe { std::ffi::CStr::from_ptr(p.cast()) }.to_bytes(),
        detail.as_bytes()
    );
    unsafe { rs_error_free(e) };

    // Bad YAML: document, line, column and stage.
    let yaml = "a: 1\n---\nb: [\n";
    let e = unsafe { rs_yaml_render_ref(null(), yaml.as_ptr(), yaml.len(), &mut out) };
    let (mut doc, mut line, mut col, mut stage) = (0, 0, 0, 0);
    assert_eq!(unsafe { rs_error_kind(e) }, RS_ERROR_INVALID_YAML);
    assert!(unsafe { rs_error_yaml(e, &mut doc, &mut line, &mut col, &mut stage) });
    assert_eq!((doc, stage), (1, RS_YAML_STAGE_YAML));
    assert!(line >= 3 && col >= 1, "{line}:{col}");
    let name = unsafe { std::ffi::CStr::from_ptr(rs_error_kind_name(rs_error_kind(e))) };
    assert_eq!(name.to_str().unwrap(), "invalid-yaml");
    unsafe { rs_error_free(e) };

    // Absent: not found.
    let absent = format!("sha256:{}", "0".repeat(64));
    assert_eq!(
        get_render(store, "ns", &absent).unwrap_err().0,
        RS_ERROR_NOT_FOUND
    );

    // A URL the library refuses, in its words, the value redacted.
    let mut none = null_mut();
    let url = "s3://bucket?region=secret-region&nope=1";
    let (kind, m) =
        check(unsafe { rs_store_open(url.as_ptr().cast(), url.len(), null(), &mut none) })
            .unwrap_err();
    assert_eq!(kind, RS_ERROR_URL, "{m}");
    assert!(m.contains("nope") && !m.contains("secret-region"), "{m}");
    assert!(none.is_null());

    // A trace that is no trace: its line.
    let trace = "{}\n";
    let mut matches = false;
    let e = unsafe {
        rs_replay(
            null(),
            trace.as_ptr().cast(),
            trace.len(),
            null(),
            &mut matches,
            null_mut(),
            null_mut(),
        )
    };
    let mut at = 0;
    assert_eq!(unsafe { rs_error_kind(e) }, RS_ERROR_TRACE);
    assert!(unsafe { rs_error_trace_line(e, &mut at) });
    assert_eq!(at, 1);
    unsafe { rs_error_free(e) };
    unsafe { rs_store_free(store) };
}

#[test]
fn the_limits_given_at_open_bound_each_call() {
    let m = leak();
    let mut options = rs_options {
        size: 0,
        memory_bytes: 0,
        fuel: 0,
        gc_grace_seconds: 0,
        concurrent_calls: 0,
        request_timeout_ms: 0,
        connect_timeout_ms: 0,
        max_retries: 0,
        retry_timeout_ms: 0,
    };
    unsafe { rs_options_init(&mut options, size_of::<rs_options>()) };
    assert_eq!(options.memory_bytes, 1 << 30);
    options.memory_bytes = 8 << 20;
    options.concurrent_calls = 4;
    let store = new_store(m, &options);
    let big = format!(r#"{{"data":"{}"}}"#, "x".repeat(16 << 20));
    let (kind, msg) = put_render(store, "ns", &[&big]).unwrap_err();
    assert_eq!(kind, RS_ERROR_MEMORY_CAP, "{msg}");

    // A blob larger than the cap is refused before it is read, naming both sizes: the
    // callback is given the cap as its limit.
    let r = put_render(store, "ns", &[CM]).unwrap();
    let blob = format!("ns/app/renders/{r}");
    m.objects.lock().unwrap().insert(blob, vec![b' '; 9 << 20]);
    let (kind, msg) = get_render(store, "ns", &r).unwrap_err();
    assert_eq!(kind, RS_ERROR_BUCKET, "{msg}");
    assert!(
        msg.contains(&(9u64 << 20).to_string()) && msg.contains(&(8u64 << 20).to_string()),
        "{msg}"
    );
    unsafe { rs_store_free(store) };

    // Fuel, through a logic call's options.
    options.fuel = 1_000;
    let (bytes, ends) = joined(&[CM]);
    let mut out = rs_buf::EMPTY;
    let e = unsafe {
        rs_render_ref(
            &options,
            bytes.as_ptr(),
            bytes.len(),
            ends.as_ptr(),
            1,
            &mut out,
        )
    };
    let mut budget = 0;
    assert_eq!(unsafe { rs_error_kind(e) }, RS_ERROR_FUEL);
    assert!(unsafe { rs_error_fuel(e, &mut budget) });
    assert_eq!(budget, 1_000);
    unsafe { rs_error_free(e) };
}

#[test]
fn null_and_bad_arguments_are_errors() {
    let (n, nl) = s("ns");
    let (a, al) = s("app");
    let mut out = rs_buf::EMPTY;
    // No store (the empty URL's NULL).
    let e = unsafe { rs_store_get_render(null(), n, nl, a, al, null(), 0, &mut out, null_mut()) };
    let (kind, m) = check(e).unwrap_err();
    assert_eq!(kind, RS_ERROR_INVALID_ARGUMENT);
    assert!(m.contains("store is NULL"), "{m}");
    // A length with a NULL pointer; a NULL out pointer.
    let store = new_store(leak(), null());
    let e =
        unsafe { rs_store_get_render(store, null(), 5, a, al, null(), 0, &mut out, null_mut()) };
    assert_eq!(check(e).unwrap_err().0, RS_ERROR_INVALID_ARGUMENT);
    let e = unsafe { rs_store_get_render(store, n, nl, a, al, null(), 0, null_mut(), null_mut()) };
    assert_eq!(check(e).unwrap_err().0, RS_ERROR_INVALID_ARGUMENT);
    // Not UTF-8: invalid input.
    let bad = [b'n', 0xff];
    let e = unsafe {
        rs_store_get_render(
            store,
            bad.as_ptr().cast(),
            2,
            a,
            al,
            null(),
            0,
            &mut out,
            null_mut(),
        )
    };
    assert_eq!(check(e).unwrap_err().0, RS_ERROR_INVALID_INPUT);
    // An unknown constant.
    let e = unsafe {
        rs_diff_renders(
            null(),
            null(),
            0,
            null(),
            0,
            7,
            RS_SECRETS_MASKED,
            RS_DEFAULT_CONTEXT,
            &mut out,
        )
    };
    assert_eq!(check(e).unwrap_err().0, RS_ERROR_INVALID_ARGUMENT);
    // Ends that do not split the objects: invalid input, as the component says.
    let ends = [5usize, 2];
    let e = unsafe { rs_canonical(null(), b"{}{}{}".as_ptr(), 6, ends.as_ptr(), 2, &mut out) };
    assert_eq!(check(e).unwrap_err().0, RS_ERROR_INVALID_INPUT);
    // A bucket missing a required callback, or too short a struct.
    let mut table = bucket_of(leak());
    table.list = None;
    let mut none = null_mut();
    let (kind, m) = check(unsafe { rs_store_new(&table, null(), &mut none) }).unwrap_err();
    assert_eq!(kind, RS_ERROR_INVALID_ARGUMENT);
    assert!(m.contains("list"), "{m}");
    table.size = 8;
    assert_eq!(
        check(unsafe { rs_store_new(&table, null(), &mut none) })
            .unwrap_err()
            .0,
        RS_ERROR_INVALID_ARGUMENT
    );
    // Freeing NULL and freeing twice are harmless.
    unsafe {
        rs_error_free(null_mut());
        rs_buf_free(null_mut());
        rs_buf_free(&mut out);
        rs_buf_free(&mut out);
        rs_store_free(null_mut());
        assert_eq!(rs_error_kind(null()), 0);
        rs_store_free(store);
    }
}

#[test]
fn an_empty_url_is_no_store_and_no_error() {
    let mut store = std::ptr::dangling_mut::<rs_store>();
    ok(unsafe { rs_store_open("  ".as_ptr().cast(), 2, null(), &mut store) });
    assert!(store.is_null());
    let mut count = -1;
    ok(unsafe { rs_history_count(store, false, 0, &mut count) });
    assert_eq!(count, 0);
}

// ---- callbacks that misbehave ----

fn get_with_mode(mode: usize) -> ((i32, String), &'static Mem) {
    let m = leak();
    let store = new_store(m, null());
    let r = put_render(store, "ns", &[CM]).unwrap();
    m.get_mode.store(mode, Ordering::Relaxed);
    let err = get_render(store, "ns", &r).unwrap_err();
    unsafe { rs_store_free(store) };
    assert_eq!(m.dropped.load(Ordering::Relaxed), 1);
    (err, m)
}

#[test]
fn a_callback_that_does_not_answer_fails_its_bucket_call() {
    let ((kind, m), _) = get_with_mode(1);
    assert_eq!(kind, RS_ERROR_BUCKET, "{m}");
    assert!(m.contains("get callback returned without an answer"), "{m}");
}

#[test]
fn a_wrong_answer_fails_its_bucket_call() {
    let ((kind, m), _) = get_with_mode(2);
    assert_eq!(kind, RS_ERROR_BUCKET);
    assert!(
        m.contains("answered wrongly: rs_answer_size does not answer a get call"),
        "{m}"
    );
    let ((kind, m), mem) = get_with_mode(4);
    assert_eq!(kind, RS_ERROR_BUCKET);
    assert!(m.contains("already answered"), "{m}");
    assert_eq!(*mem.second_answer.lock().unwrap(), Some(false));
}

#[test]
fn a_handle_kept_past_its_callback_answers_nothing() {
    let ((kind, m), mem) = get_with_mode(3);
    assert_eq!(kind, RS_ERROR_BUCKET);
    assert!(m.contains("without an answer"), "{m}");
    let kept = mem.kept.lock().unwrap().unwrap() as *mut rs_answer;
    let late = unsafe { rs_answer_bytes(kept, b"x".as_ptr(), 1) };
    assert!(!late);
    // A handle that never was one.
    assert!(!unsafe { rs_answer_ok(usize::MAX as *mut rs_answer) });
}

#[test]
fn a_store_call_from_inside_a_callback_is_refused() {
    let ((kind, m), mem) = get_with_mode(5);
    assert_eq!(kind, RS_ERROR_NOT_FOUND, "{m}");
    let (nested, text) = mem
        .nested
        .lock()
        .unwrap()
        .clone()
        .expect("the nested call failed");
    assert_eq!(nested, RS_ERROR_INVALID_ARGUMENT);
    assert!(text.contains("inside a bucket callback"), "{text}");
}

#[test]
fn a_panic_inside_the_library_is_an_error_and_the_store_goes_on() {
    let store = new_store(leak(), null());
    let (ns, name) = crate::bucket::PANIC_RELEASE
        .trim_end_matches('/')
        .split_once('/')
        .unwrap();
    let (n, nl) = s(ns);
    let (a, al) = s(name);
    let r = format!("sha256:{}", "0".repeat(64));
    let (rp, rl) = s(&r);
    let mut out = rs_buf::EMPTY;
    let e = unsafe { rs_store_get_render(store, n, nl, a, al, rp, rl, &mut out, null_mut()) };
    let (kind, m) = check(e).unwrap_err();
    assert_eq!(kind, RS_ERROR_PANIC, "{m}");
    assert!(m.contains("a test asked the bucket to panic"), "{m}");
    // The thread and the store are usable again.
    let r = put_render(store, "ns", &[CM]).unwrap();
    assert!(get_render(store, "ns", &r).is_ok());
    unsafe { rs_store_free(store) };
}

// ---- threads ----

#[test]
fn sixteen_threads_share_one_store() {
    let m = leak();
    let store = new_store(m, null()) as usize;
    let url = "mem://";
    let mut mem_store = null_mut();
    ok(unsafe { rs_store_open(url.as_ptr().cast(), url.len(), null(), &mut mem_store) });
    let mem_store = mem_store as usize;
    let threads: Vec<_> = (0..16)
        .map(|i| {
            std::thread::spawn(move || {
                for &store in &[store, mem_store] {
                    let store = store as *const rs_store;
                    for j in 0..5 {
                        let object =
                            format!(r#"{{"kind":"ConfigMap","metadata":{{"name":"t{i}-{j}"}}}}"#);
                        let ns = format!("ns{i}");
                        let r = put_render(store, &ns, &[&object]).unwrap();
                        let canonical = get_render(store, &ns, &r).unwrap();
                        assert!(canonical.ends_with(b"\n"));
                        let (n, nl) = s(&ns);
                        let (a, al) = s("app");
                        let (rp, rl) = s(&r);
                        let mut added = false;
                        let t = rs_time {
                            seconds: 1_700_000_000 + j,
                            nanoseconds: 0,
                        };
                        ok(unsafe {
                            rs_store_record_history(
                                store,
                                n,
                                nl,
                                a,
                                al,
                                rp,
                                rl,
                                t,
                                null(),
                                0,
                                &mut added,
                                null_mut(),
                            )
                        });
                        assert!(added);
                    }
                    let n = format!("ns{i}");
                    let mut json = rs_buf::EMPTY;
                    ok(unsafe {
                        rs_store_list_history(
                            store,
                            n.as_ptr().cast(),
                            n.len(),
                            "app".as_ptr().cast(),
                            3,
                            &mut json,
                            null_mut(),
                        )
                    });
                    let v: serde_json::Value = serde_json::from_slice(&take(json)).unwrap();
                    assert_eq!(v["entries"].as_array().unwrap().len(), 5);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(m.calls.load(Ordering::Relaxed) >= 16 * 5 * 4);
    unsafe {
        rs_store_free(store as *mut rs_store);
        rs_store_free(mem_store as *mut rs_store);
    }
}

// ---- shapes ----

#[test]
fn history_gc_and_diff_come_back_in_the_shapes_the_hosts_print() {
    let store = new_store(leak(), null());
    let secret = |v: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"s"}},"data":{{"p":"{v}"}}}}"#
        )
    };
    let (one, two) = (secret("b2xk"), secret("bmV3"));
    let r1 = put_render(store, "ns", &[CM, &one]).unwrap();
    let r2 = put_render(store, "ns", &[&two]).unwrap();
    let (n, nl) = s("ns");
    let (a, al) = s("app");
    for (i, r) in [&r1, &r2].into_iter().enumerate() {
        let (rp, rl) = s(r);
        let mut added = false;
        let t = rs_time {
            seconds: 1_767_225_600 + i as i64,
            nanoseconds: 5,
        };
        ok(unsafe {
            rs_store_record_history(
                store,
                n,
                nl,
                a,
                al,
                rp,
                rl,
                t,
                "s".as_ptr().cast(),
                1,
                &mut added,
                null_mut(),
            )
        });
    }

    // The history: the component's shape, as a trace's result holds it.
    let mut out = rs_buf::EMPTY;
    let mut trace = rs_buf::EMPTY;
    ok(unsafe { rs_store_list_history(store, n, nl, a, al, &mut out, &mut trace) });
    let history = take_text(out);
    let trace = take_text(trace);
    let result_line = trace.lines().last().unwrap();
    assert!(
        result_line.contains(&format!("{{\"ok\":{history}}}")),
        "{result_line}\n{history}"
    );
    let v: serde_json::Value = serde_json::from_str(&history).unwrap();
    assert_eq!(
        v["entries"][0]["syncedAt"],
        serde_json::json!({"seconds": 1_767_225_600, "nanoseconds": 5})
    );

    // A page: the same entries, newest first, and the cursor.
    let mut out = rs_buf::EMPTY;
    ok(unsafe { rs_store_list_history_page(store, n, nl, a, al, 1, null(), 0, &mut out) });
    let page: serde_json::Value = serde_json::from_slice(&take(out)).unwrap();
    assert_eq!(page["entries"][0]["renderRef"], r2.as_str());
    assert_eq!(page["entries"][0], v["entries"][1]);
    let before = page["nextBefore"].as_str().unwrap().to_string();
    let mut out = rs_buf::EMPTY;
    ok(unsafe {
        rs_store_list_history_page(
            store,
            n,
            nl,
            a,
            al,
            1,
            before.as_ptr().cast(),
            before.len(),
            &mut out,
        )
    });
    let page: serde_json::Value = serde_json::from_slice(&take(out)).unwrap();
    assert_eq!(page["entries"][0]["renderRef"], r1.as_str());
    assert!(page["nextBefore"].is_null());

    // A diff from the newest entry (r2) to r1: `render-store --json diff`'s shape,
    // Secret values masked by default.
    let (rp, rl) = s(&r1);
    let mut out = rs_buf::EMPTY;
    ok(unsafe {
        rs_store_diff(
            store,
            n,
            nl,
            a,
            al,
            rp,
            rl,
            null(),
            0,
            RS_FORM_YAML,
            RS_SECRETS_MASKED,
            RS_DEFAULT_CONTEXT,
            &mut out,
        )
    });
    let masked: serde_json::Value = serde_json::from_slice(&take(out)).unwrap();
    let rs = crate::call::block_on(async {
        // SAFETY: the store made above, not freed yet.
        let inner = unsafe { &*store }.inner().clone();
        let observer = render_store::Observer::new(Some(inner)).unwrap();
        observer
            .diff(
                &render_store::Release::new("ns", "app"),
                &r1,
                None,
                render_store::ObjectForm::Yaml,
                render_store::DEFAULT_CONTEXT,
            )
            .await
            .unwrap()
    });
    // The observer's diff, as the CLI and /diff print it: the same.
    assert_eq!(masked, render_store::json_view::diff(&rs.unwrap()));
    let text = masked.to_string();
    assert!(
        text.contains("***") && !text.contains("bmV3") && !text.contains("b2xk"),
        "{text}"
    );
    let mut out = rs_buf::EMPTY;
    ok(unsafe {
        rs_store_diff(
            store,
            n,
            nl,
            a,
            al,
            rp,
            rl,
            null(),
            0,
            RS_FORM_YAML,
            RS_SECRETS_SHOWN,
            RS_DEFAULT_CONTEXT,
            &mut out,
        )
    });
    assert!(take_text(out).contains("bmV3"));

    // diff-local of r1's canonical bytes against r2, named: the same change.
    let canonical = get_render(store, "ns", &r1).unwrap();
    let (rp, rl) = s(&r2);
    let mut out = rs_buf::EMPTY;
    ok(unsafe {
        rs_store_diff_local(
            store,
            n,
            nl,
            a,
            al,
            canonical.as_ptr(),
            canonical.len(),
            rp,
            rl,
            RS_FORM_JSON,
            RS_SECRETS_MASKED,
            RS_DEFAULT_CONTEXT,
            &mut out,
        )
    });
    let local: serde_json::Value = serde_json::from_slice(&take(out)).unwrap();
    assert_eq!(local["added"][0]["kind"], "ConfigMap");
    // Whole, in the form asked for (JSON here).
    let text = local["added"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("{\n  \"apiVersion\""), "{text}");

    // GC: the component's plan, equal to the pure plan of the same listings.
    let grace = rs_grace {
        now: rs_time {
            seconds: 1_800_000_000,
            nanoseconds: 0,
        },
        seconds: 0,
    };
    let mut out = rs_buf::EMPTY;
    ok(unsafe {
        rs_store_gc(
            store,
            n,
            nl,
            a,
            al,
            1,
            null(),
            0,
            null(),
            0,
            true,
            &grace,
            &mut out,
            null_mut(),
        )
    });
    let plan: serde_json::Value = serde_json::from_slice(&take(out)).unwrap();
    assert_eq!(plan["deleteRenders"][0], format!("ns/app/renders/{r1}"));
    let history_keys: Vec<String> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap().to_string())
        .collect();
    let render_keys = [
        format!("ns/app/renders/{r1}"),
        format!("ns/app/renders/{r2}"),
    ];
    let (hb, he) = joined(&history_keys.iter().map(String::as_str).collect::<Vec<_>>());
    let (rb, re) = joined(&render_keys.iter().map(String::as_str).collect::<Vec<_>>());
    let mut out = rs_buf::EMPTY;
    ok(unsafe {
        rs_plan_gc(
            null(),
            n,
            nl,
            a,
            al,
            1,
            hb.as_ptr(),
            hb.len(),
            he.as_ptr(),
            he.len(),
            rb.as_ptr(),
            rb.len(),
            re.as_ptr(),
            re.len(),
            null(),
            0,
            null(),
            0,
            grace.now,
            &mut out,
        )
    });
    let pure: serde_json::Value = serde_json::from_slice(&take(out)).unwrap();
    assert_eq!(pure, plan);

    // The summary of the same keys (a foreign one among them is not counted): their
    // number and the newest entry, as the history lists it.
    let mut with_foreign: Vec<&str> = history_keys.iter().map(String::as_str).collect();
    with_foreign.push("ns/app/history/notes.txt");
    let (kb, ke) = joined(&with_foreign);
    let mut out = rs_buf::EMPTY;
    ok(unsafe {
        rs_summarize_history(
            null(),
            n,
            nl,
            a,
            al,
            kb.as_ptr(),
            kb.len(),
            ke.as_ptr(),
            ke.len(),
            &mut out,
        )
    });
    let summary: serde_json::Value = serde_json::from_slice(&take(out)).unwrap();
    let newest = v["entries"].as_array().unwrap().last().unwrap();
    assert_eq!(summary["entries"], history_keys.len());
    assert_eq!(summary["newest"]["renderRef"], newest["renderRef"]);
    assert_eq!(summary["newest"]["syncedAt"], newest["syncedAt"]);

    // An empty history has nothing to diff against.
    let (o, ol) = s("other");
    let mut out = rs_buf::EMPTY;
    let e = unsafe {
        rs_store_diff(
            store,
            o,
            ol,
            a,
            al,
            rp,
            rl,
            null(),
            0,
            RS_FORM_YAML,
            RS_SECRETS_MASKED,
            RS_DEFAULT_CONTEXT,
            &mut out,
        )
    };
    assert_eq!(check(e).unwrap_err().0, RS_ERROR_NO_HISTORY);
    unsafe { rs_store_free(store) };
}

#[test]
fn logic_and_controller_rules_come_from_the_library() {
    let yaml = "a: |\n  two\n  lines\n---\n---\nb: 2\n";
    let mut out = rs_buf::EMPTY;
    ok(unsafe { rs_yaml_objects(null(), yaml.as_ptr(), yaml.len(), &mut out) });
    assert_eq!(take_text(out), "{\"a\":\"two\\nlines\\n\"}\n{\"b\":2}\n");

    let (n, nl) = s("ns");
    let (a, al) = s("app");
    let r = format!("sha256:{}", "a".repeat(64));
    let (rp, rl) = s(&r);
    let t = rs_time {
        seconds: 1_767_225_600,
        nanoseconds: 120_000_000,
    };
    let mut key = rs_buf::EMPTY;
    ok(unsafe { rs_history_key(null(), n, nl, a, al, t, rp, rl, &mut key) });
    let key = take_text(key);
    assert_eq!(
        key,
        format!("ns/app/history/20260101T000000.120000000Z-{r}")
    );
    let (mut kind, mut parsed, mut at) = (
        0,
        rs_buf::EMPTY,
        rs_time {
            seconds: 0,
            nanoseconds: 0,
        },
    );
    ok(unsafe {
        rs_parse_key(
            null(),
            n,
            nl,
            a,
            al,
            key.as_ptr().cast(),
            key.len(),
            &mut kind,
            &mut parsed,
            &mut at,
        )
    });
    assert_eq!(
        (kind, take_text(parsed), at),
        (RS_KEY_HISTORY, r.clone(), t)
    );
    let mut prefix = rs_buf::EMPTY;
    ok(unsafe { rs_release_prefix(null(), n, nl, a, al, &mut prefix) });
    assert_eq!(take_text(prefix), "ns/app/");
    let mut text = rs_buf::EMPTY;
    ok(unsafe { rs_format_synced_at(null(), t, &mut text) });
    let text = take_text(text);
    assert_eq!(text, "2026-01-01T00:00:00.12Z");
    let mut back = rs_time {
        seconds: 0,
        nanoseconds: 0,
    };
    ok(unsafe { rs_parse_synced_at(null(), text.as_ptr().cast(), text.len(), &mut back) });
    assert_eq!(back, t);
    assert_eq!(
        check(unsafe { rs_validate_render_ref(null(), "sha256:AB".as_ptr().cast(), 9) })
            .unwrap_err()
            .0,
        RS_ERROR_INVALID_INPUT
    );

    let mut keep = 0;
    ok(unsafe { rs_effective_keep_history(false, 0, &mut keep) });
    assert_eq!(keep, render_store::controller::DEFAULT_KEEP_HISTORY);
    ok(unsafe { rs_effective_keep_history(true, -3, &mut keep) });
    assert_eq!(keep, 0);
    let store = new_store(leak(), null());
    let mut count = 0;
    ok(unsafe { rs_history_count(store, true, 7, &mut count) });
    assert_eq!(count, 7);
    unsafe { rs_store_free(store) };
    let mut refs = rs_buf::EMPTY;
    ok(unsafe {
        rs_protected_refs(
            "b".as_ptr().cast(),
            1,
            "a".as_ptr().cast(),
            1,
            "".as_ptr().cast(),
            0,
            null(),
            0,
            "a".as_ptr().cast(),
            1,
            &mut refs,
        )
    });
    assert_eq!(take_text(refs), r#"["a","b"]"#);
}

// ---- where callbacks run, batch deletes, traces ----

static CALLBACK_THREADS: Mutex<Vec<std::thread::ThreadId>> = Mutex::new(Vec::new());

unsafe extern "C" fn exists_noting_thread(
    d: *mut c_void,
    k: *const c_char,
    n: usize,
    a: *mut rs_answer,
) {
    CALLBACK_THREADS
        .lock()
        .unwrap()
        .push(std::thread::current().id());
    // SAFETY: passed on as the library gave them.
    unsafe { exists(d, k, n, a) }
}

/// Answers every key but the last: the batch is a failed answer naming what is missing.
unsafe extern "C" fn delete_many_but_last(
    _: *mut c_void,
    _: *const rs_str,
    count: usize,
    a: *mut rs_answer,
) {
    for i in 0..count.saturating_sub(1) {
        // SAFETY: the handle the library gave.
        unsafe { rs_answer_key_ok(a, i) };
    }
}

#[test]
fn callbacks_run_on_the_thread_that_called() {
    let m = leak();
    let mut table = bucket_of(m);
    table.exists = Some(exists_noting_thread);
    let mut store = null_mut();
    ok(unsafe { rs_store_new(&table, null(), &mut store) });
    put_render(store, "ns", &[CM]).unwrap();
    let threads = CALLBACK_THREADS.lock().unwrap().clone();
    assert_eq!(threads, [std::thread::current().id()]);
    unsafe { rs_store_free(store) };
}

#[test]
fn a_batch_delete_with_an_unanswered_key_stops_the_operation() {
    let m = leak();
    let mut table = bucket_of(m);
    table.delete_many = Some(delete_many_but_last);
    let mut store = null_mut();
    ok(unsafe { rs_store_new(&table, null(), &mut store) });
    put_render(store, "ns", &[CM]).unwrap();
    put_render(store, "ns", &[r#"{"kind":"Service"}"#]).unwrap();
    let (n, nl) = s("ns");
    let (a, al) = s("app");
    let mut deleted = 0;
    let e = unsafe { rs_store_delete_release(store, n, nl, a, al, &mut deleted, null_mut()) };
    let (kind, msg) = check(e).unwrap_err();
    assert_eq!(kind, RS_ERROR_BUCKET, "{msg}");
    assert!(
        msg.contains("left 1 of 2 keys unanswered (the first is key 1)"),
        "{msg}"
    );
    unsafe { rs_store_free(store) };
}

#[test]
fn a_traced_put_replays_to_a_match() {
    let store = new_store(leak(), null());
    let (bytes, ends) = joined(&[CM, r#"{"kind":"Service"}"#]);
    let (n, nl) = s("ns");
    let (a, al) = s("app");
    let (mut r, mut trace) = (rs_buf::EMPTY, rs_buf::EMPTY);
    ok(unsafe {
        rs_store_put_render(
            store,
            n,
            nl,
            a,
            al,
            bytes.as_ptr(),
            bytes.len(),
            ends.as_ptr(),
            2,
            &mut r,
            &mut trace,
        )
    });
    let r = take_text(r);
    let trace = take_text(trace);
    assert!(trace.lines().last().unwrap().contains(&r), "{trace}");
    let (mut matches, mut text, mut json) = (false, rs_buf::EMPTY, rs_buf::EMPTY);
    ok(unsafe {
        rs_replay(
            null(),
            trace.as_ptr().cast(),
            trace.len(),
            null(),
            &mut matches,
            &mut text,
            &mut json,
        )
    });
    assert!(matches, "{}", take_text(text));
    let report: serde_json::Value = serde_json::from_slice(&take(json)).unwrap();
    assert_eq!(report["result"]["ok"]["renderRef"], r.as_str());
    // A failed operation is traced too: its error is the trace's result.
    let mut trace = rs_buf::EMPTY;
    let (x, xl) = s("Bad_Ns");
    let mut render = rs_buf::EMPTY;
    let e = unsafe {
        rs_store_get_render(
            store,
            x,
            xl,
            a,
            al,
            r.as_ptr().cast(),
            r.len(),
            &mut render,
            &mut trace,
        )
    };
    assert_eq!(check(e).unwrap_err().0, RS_ERROR_INVALID_INPUT);
    assert!(take_text(trace).contains("invalid-input"));
    unsafe { rs_store_free(store) };
}

#[test]
fn the_default_context_is_the_librarys() {
    assert_eq!(
        crate::value::RS_DEFAULT_CONTEXT,
        render_store::DEFAULT_CONTEXT
    );
}

#[test]
fn the_bucket_under_a_store_answers_directly_with_the_bucket_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let mut store = null_mut();
    ok(unsafe { rs_store_open(s(&url).0, url.len(), null(), &mut store) });
    let (k, kn) = s("ns/app/renders/a");
    ok(unsafe { rs_store_bucket_put(store, k, kn, b"abc".as_ptr(), 3) });
    let (mut found, mut size) = (false, 0);
    ok(unsafe { rs_store_bucket_exists(store, k, kn, &mut found, &mut size) });
    assert!(found && size == 3);
    let mut value = rs_buf::EMPTY;
    ok(unsafe { rs_store_bucket_get(store, k, kn, 3, &mut value) });
    assert_eq!(take(value), b"abc");

    // Over the limit: too-large with both sizes, the content unread.
    let mut value = rs_buf::EMPTY;
    let e = unsafe { rs_store_bucket_get(store, k, kn, 2, &mut value) };
    let (mut got, mut limit) = (0, 0);
    assert!(unsafe { rs_error_too_large(e, &mut got, &mut limit) });
    assert_eq!((got, limit), (3, 2));
    assert_eq!(check(e).unwrap_err().0, RS_ERROR_TOO_LARGE);

    let mut listing = rs_buf::EMPTY;
    ok(unsafe { rs_store_bucket_list(store, s("ns/").0, 3, &mut listing) });
    let listed: serde_json::Value = serde_json::from_str(&take_text(listing)).unwrap();
    assert_eq!(listed[0]["key"], "ns/app/renders/a");
    assert_eq!(listed[0]["size"], 3);
    assert!(listed[0]["modified"]["seconds"].as_i64().unwrap() > 0);

    // The delimiter listing: the folders directly under a folder prefix, and the JSON
    // objects of a listing; a prefix that names no folder is refused before any read.
    let mut listing = rs_buf::EMPTY;
    ok(unsafe { rs_store_bucket_list_delimited(store, s("").0, 0, &mut listing) });
    let listed: serde_json::Value = serde_json::from_str(&take_text(listing)).unwrap();
    assert_eq!(
        listed,
        serde_json::json!({"folders": ["ns/"], "objects": []})
    );
    let mut listing = rs_buf::EMPTY;
    ok(unsafe { rs_store_bucket_list_delimited(store, s("ns/app/renders/").0, 15, &mut listing) });
    let listed: serde_json::Value = serde_json::from_str(&take_text(listing)).unwrap();
    assert_eq!(listed["folders"], serde_json::json!([]));
    assert_eq!(listed["objects"][0]["key"], "ns/app/renders/a");
    assert_eq!(listed["objects"][0]["size"], 3);
    let mut listing = rs_buf::EMPTY;
    let e = check(unsafe { rs_store_bucket_list_delimited(store, s("ns").0, 2, &mut listing) });
    assert_eq!(e.unwrap_err().0, RS_ERROR_DENIED);

    // An absent key, an unclean key, a link planted in the folder.
    let (absent, an) = s("ns/app/renders/b");
    let mut value = rs_buf::EMPTY;
    let e = check(unsafe { rs_store_bucket_get(store, absent, an, 9, &mut value) });
    assert_eq!(e.unwrap_err().0, RS_ERROR_NOT_FOUND);
    let (bad, bn) = s("ns/../x");
    let e = check(unsafe { rs_store_bucket_put(store, bad, bn, null(), 0) });
    assert_eq!(e.unwrap_err().0, RS_ERROR_DENIED);
    std::os::unix::fs::symlink(
        dir.path().join("ns/app/renders"),
        dir.path().join("ns/link"),
    )
    .unwrap();
    let mut listing = rs_buf::EMPTY;
    let e = check(unsafe { rs_store_bucket_list(store, s("ns/").0, 3, &mut listing) });
    let (kind, m) = e.unwrap_err();
    assert_eq!(kind, RS_ERROR_DENIED, "{m}");
    assert!(m.contains("ns/link"), "{m}");
    std::fs::remove_file(dir.path().join("ns/link")).unwrap();

    // delete-many: one answer per key, in order.
    let (bytes, ends) = joined(&["ns/app/renders/a", "ns/app/renders/b", "ns//x"]);
    let mut each = rs_buf::EMPTY;
    ok(unsafe {
        rs_store_bucket_delete_many(
            store,
            bytes.as_ptr(),
            bytes.len(),
            ends.as_ptr(),
            3,
            &mut each,
        )
    });
    let each: serde_json::Value = serde_json::from_str(&take_text(each)).unwrap();
    assert_eq!(each[0], serde_json::Value::Null);
    assert_eq!(each[1], serde_json::Value::Null);
    assert_eq!(each[2]["kind"], RS_ERROR_DENIED);
    ok(unsafe { rs_store_bucket_exists(store, k, kn, &mut found, &mut size) });
    assert!(!found);
    ok(unsafe { rs_store_bucket_delete(store, k, kn) });
    unsafe { rs_store_free(store) };
}

// ---- encryption at rest ----

#[test]
fn a_store_with_a_keyring_seals_blobs_and_one_without_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "k1 AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\n").unwrap();
    let store_dir = dir.path().join("store");
    std::fs::create_dir(&store_dir).unwrap();
    let url = format!("file://{}", store_dir.display());
    let mut plain = null_mut();
    ok(unsafe { rs_store_open(url.as_ptr().cast(), url.len(), null(), &mut plain) });
    // Readable by others: refused, naming the mode; nothing made.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = keys.to_str().unwrap();
    let mut keyring = std::ptr::dangling_mut::<rs_keyring>();
    let (kind, m) =
        check(unsafe { rs_keyring_open(path.as_ptr().cast(), path.len(), null(), &mut keyring) })
            .unwrap_err();
    assert_eq!(kind, RS_ERROR_INVALID_INPUT, "{m}");
    assert!(m.contains("mode 0644") && keyring.is_null(), "{m}");
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(unsafe { rs_keyring_open(path.as_ptr().cast(), path.len(), null(), &mut keyring) });
    let mut sealed = null_mut();
    ok(unsafe { rs_store_with_keyring(plain, keyring, false, &mut sealed) });
    unsafe { rs_keyring_free(keyring) };

    let secret = r#"{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"stringData":{"p":"Yx7Qm2Lr9Vd4Kt8Wn3Bz"}}"#;
    let r = put_render(sealed, "ns", &[secret]).unwrap();
    let blob = std::fs::read(store_dir.join(format!("ns/app/renders/{r}"))).unwrap();
    assert!(blob.starts_with(b"render-store-encrypted v2 k1 "));
    assert!(!blob.windows(20).any(|w| w == b"Yx7Qm2Lr9Vd4Kt8Wn3Bz"));
    assert!(
        String::from_utf8(get_render(sealed, "ns", &r).unwrap())
            .unwrap()
            .contains("Yx7Qm2Lr9Vd4Kt8Wn3Bz")
    );
    let (kind, m) = get_render(plain, "ns", &r).unwrap_err();
    assert_eq!(kind, RS_ERROR_ENCRYPTION_KEY, "{m}");
    assert!(m.contains("\"k1\""), "{m}");
    let name = unsafe { std::ffi::CStr::from_ptr(rs_error_kind_name(kind)) };
    assert_eq!(name.to_str().unwrap(), "encryption-key");

    // Rekey: a plaintext blob put by the plain store is sealed; the sealed one kept.
    let other = put_render(plain, "ns", &[CM]).unwrap();
    let (n, nl) = s("ns");
    let (a, al) = s("app");
    let (mut rewritten, mut kept) = (0u32, 0u32);
    ok(unsafe { rs_store_rekey_release(sealed, n, nl, a, al, &mut rewritten, &mut kept) });
    assert_eq!((rewritten, kept), (1, 1));
    assert_eq!(
        get_render(plain, "ns", &other).unwrap_err().0,
        RS_ERROR_ENCRYPTION_KEY
    );
    let (kind, _) =
        check(unsafe { rs_store_rekey_release(plain, n, nl, a, al, null_mut(), null_mut()) })
            .unwrap_err();
    assert_eq!(kind, RS_ERROR_INVALID_INPUT);
    unsafe {
        rs_store_free(sealed);
        rs_store_free(plain);
    }
}

#[test]
fn a_store_that_requires_encryption_refuses_a_planted_plaintext_blob_and_needs_a_keyring() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "k1 AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).unwrap();
    let store_dir = dir.path().join("store");
    std::fs::create_dir(&store_dir).unwrap();
    let url = format!("file://{}", store_dir.display());
    let mut plain = null_mut();
    ok(unsafe { rs_store_open(url.as_ptr().cast(), url.len(), null(), &mut plain) });
    // Without a keyring the rule is refused, and nothing is made.
    let mut refused = std::ptr::dangling_mut::<rs_store>();
    let (kind, m) =
        check(unsafe { rs_store_with_keyring(plain, null(), true, &mut refused) }).unwrap_err();
    assert_eq!(kind, RS_ERROR_INVALID_INPUT, "{m}");
    assert!(
        m.contains("the keyring is empty") && refused.is_null(),
        "{m}"
    );
    let path = keys.to_str().unwrap();
    let mut keyring = null_mut();
    ok(unsafe { rs_keyring_open(path.as_ptr().cast(), path.len(), null(), &mut keyring) });
    let (mut lenient, mut strict) = (null_mut(), null_mut());
    ok(unsafe { rs_store_with_keyring(plain, keyring, false, &mut lenient) });
    ok(unsafe { rs_store_with_keyring(plain, keyring, true, &mut strict) });
    unsafe { rs_keyring_free(keyring) };
    let r = put_render(strict, "ns", &[CM]).unwrap();
    let blob = store_dir.join(format!("ns/app/renders/{r}"));
    let sealed = std::fs::read(&blob).unwrap();
    // A writer without the key plants the plaintext: read without the rule, corrupt with.
    let canonical = get_render(strict, "ns", &r).unwrap();
    std::fs::write(&blob, &canonical).unwrap();
    assert_eq!(get_render(lenient, "ns", &r).unwrap(), canonical);
    let (kind, m) = get_render(strict, "ns", &r).unwrap_err();
    assert_eq!(kind, RS_ERROR_CORRUPT, "{m}");
    assert!(
        m.contains("encryption is required") && m.contains("is plaintext"),
        "{m}"
    );
    // A put under the rule seals it again.
    put_render(strict, "ns", &[CM]).unwrap();
    assert_eq!(std::fs::read(&blob).unwrap(), sealed);
    assert_eq!(get_render(strict, "ns", &r).unwrap(), canonical);
    unsafe {
        rs_store_free(strict);
        rs_store_free(lenient);
        rs_store_free(plain);
    }
}

/// A listener on 127.0.0.1 that accepts and never answers; the s3:// URL of a store on
/// it. The connections stay open until the test ends.
fn black_hole() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    format!(
        "s3://renders?region=us-east-1&endpoint=http://{addr}&use_path_style=true&anonymous=true"
    )
}

fn open_url(url: &str, options: *const rs_options) -> *mut rs_store {
    let mut store = null_mut();
    let (u, n) = s(url);
    ok(unsafe { rs_store_open(u, n, options, &mut store) });
    store
}

/// A handle with a deadline ends a call on a bucket that never answers within 100 ms
/// of it, with RS_ERROR_DEADLINE_EXCEEDED; a cancel handle ends one from another thread
/// with RS_ERROR_CANCELLED, and every later call of that handle before any bucket call.
#[test]
fn a_deadline_or_a_cancel_ends_a_call_on_a_black_hole() {
    let store = open_url(&black_hole(), null());
    let mut bounded = null_mut();
    ok(unsafe { rs_store_with_deadline(store, 300_000_000, null(), &mut bounded) });
    let start = std::time::Instant::now();
    let e = put_render(bounded, "ns", &[r#"{"kind":"A"}"#]).unwrap_err();
    let took = start.elapsed();
    assert_eq!(e.0, RS_ERROR_DEADLINE_EXCEEDED, "{}", e.1);
    assert!(e.1.starts_with("deadline exceeded"), "{}", e.1);
    assert!(
        took >= std::time::Duration::from_millis(300)
            && took < std::time::Duration::from_millis(400),
        "{took:?}"
    );
    // The direct bucket calls are bounded by the same deadline, now passed.
    let mut found = false;
    let mut size = 0;
    let (k, n) = s("ns/app/renders/x");
    let e = check(unsafe { rs_store_bucket_exists(bounded, k, n, &mut found, &mut size) });
    assert_eq!(e.unwrap_err().0, RS_ERROR_DEADLINE_EXCEEDED);
    unsafe { rs_store_free(bounded) };

    let mut cancel = null_mut();
    ok(unsafe { rs_cancel_new(&mut cancel) });
    let mut cancellable = null_mut();
    ok(unsafe { rs_store_with_deadline(store, 0, cancel, &mut cancellable) });
    let remote = cancel as usize;
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        unsafe { rs_cancel_cancel(remote as *const rs_cancel) };
    });
    let start = std::time::Instant::now();
    let e = get_render(cancellable, "ns", &format!("sha256:{}", "a".repeat(64))).unwrap_err();
    assert_eq!(e.0, RS_ERROR_CANCELLED, "{}", e.1);
    assert!(start.elapsed() < std::time::Duration::from_millis(300));
    canceller.join().unwrap();
    let e = get_render(cancellable, "ns", &format!("sha256:{}", "a".repeat(64))).unwrap_err();
    assert_eq!(e.0, RS_ERROR_CANCELLED);
    // Freeing the cancel handle leaves the store handle usable (and cancelled).
    unsafe { rs_cancel_free(cancel) };
    assert_eq!(
        put_render(cancellable, "ns", &[r#"{"kind":"A"}"#])
            .unwrap_err()
            .0,
        RS_ERROR_CANCELLED
    );
    unsafe { rs_store_free(cancellable) };
    let kind = |k| unsafe { std::ffi::CStr::from_ptr(rs_error_kind_name(k)) };
    assert_eq!(kind(RS_ERROR_DEADLINE_EXCEEDED), c"deadline-exceeded");
    assert_eq!(kind(RS_ERROR_CANCELLED), c"cancelled");
    unsafe { rs_store_free(store) };
}

/// The options' request timeout and retries bound a cloud request with no deadline.
#[test]
fn the_options_bound_a_cloud_request() {
    let mut options: rs_options = unsafe { std::mem::zeroed() };
    unsafe { rs_options_init(&mut options, size_of::<rs_options>()) };
    assert_eq!(options.request_timeout_ms, 30_000);
    assert_eq!(
        (options.connect_timeout_ms, options.max_retries),
        (5_000, 3)
    );
    options.request_timeout_ms = 200;
    options.max_retries = 0;
    let store = open_url(&black_hole(), &options);
    let start = std::time::Instant::now();
    let e = get_render(store, "ns", &format!("sha256:{}", "a".repeat(64))).unwrap_err();
    assert_eq!(e.0, RS_ERROR_BUCKET, "{}", e.1);
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
    unsafe { rs_store_free(store) };
}

// ---- the generated entry points: JSON in, JSON out ----

/// Calls a generated store entry point with `args` and reads its JSON answer.
fn call_store(
    f: unsafe extern "C" fn(*const rs_store, *const u8, usize, *mut rs_buf) -> *mut rs_error,
    store: *const rs_store,
    args: serde_json::Value,
) -> Result<serde_json::Value, (i32, String)> {
    let text = args.to_string();
    let mut out = rs_buf::EMPTY;
    check(unsafe { f(store, text.as_ptr(), text.len(), &mut out) })?;
    Ok(serde_json::from_str(&take_text(out)).unwrap())
}

/// Calls a generated logic or trace entry point with `args` and reads its JSON answer.
fn call_logic(
    f: unsafe extern "C" fn(*const rs_options, *const u8, usize, *mut rs_buf) -> *mut rs_error,
    args: serde_json::Value,
) -> Result<serde_json::Value, (i32, String)> {
    let text = args.to_string();
    let mut out = rs_buf::EMPTY;
    check(unsafe { f(null(), text.as_ptr(), text.len(), &mut out) })?;
    Ok(serde_json::from_str(&take_text(out)).unwrap())
}

#[test]
fn the_generated_entry_points_answer_as_the_hand_written_ones() {
    use base64::Engine as _;
    use serde_json::json;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let m = leak();
    let store = new_store(m, null());
    let release = json!({"namespace": "ns", "name": "app"});
    // put-render through JSON stores what the hand-written entry point reads back.
    let objects = json!({"bytes": b64(CM.as_bytes()), "ends": [CM.len()]});
    let render_ref = call_store(
        rs_call_store_put_render,
        store,
        json!({"release": release, "objects": objects}),
    )
    .unwrap();
    let old_ref = put_render(store, "ns", &[CM]).unwrap();
    assert_eq!(render_ref, json!(old_ref));
    let bytes = call_store(
        rs_call_store_get_render,
        store,
        json!({"release": release, "renderRef": old_ref}),
    )
    .unwrap();
    assert_eq!(
        bytes,
        json!(b64(&get_render(store, "ns", &old_ref).unwrap()))
    );
    // A history entry recorded through JSON is listed, with its trust as a variant.
    let added = call_store(
        rs_call_store_record_history,
        store,
        json!({"release": release, "entry": {
            "renderRef": old_ref,
            "syncedAt": {"seconds": 1_700_000_000, "nanoseconds": 5},
            "summary": "first"
        }}),
    )
    .unwrap();
    assert_eq!(added, json!(true));
    let listed = call_store(
        rs_call_store_list_history,
        store,
        json!({"release": release}),
    )
    .unwrap();
    assert_eq!(listed[0]["renderRef"], json!(old_ref));
    assert_eq!(listed[0]["summary"], json!("first"));
    assert_eq!(
        listed[0]["syncedAt"],
        json!({"seconds": 1_700_000_000, "nanoseconds": 5})
    );
    assert_eq!(listed[0]["trust"], json!({"tag": "unchecked"}));
    // blame-object, which no hand-written C function answered in the WIT's shape.
    let blame = call_store(
        rs_call_store_blame_object,
        store,
        json!({"release": release, "object": "ConfigMap/a", "secrets": "masked"}),
    )
    .unwrap();
    assert_eq!(blame["object"]["kind"], json!("ConfigMap"));
    assert_eq!(blame["entries"][0]["renderRef"], json!(old_ref));
    // A logic function, and its parity with the hand-written one.
    let (cb, ce) = joined(&[CM]);
    let mut out = rs_buf::EMPTY;
    ok(unsafe {
        rs_render_ref(
            null(),
            cb.as_ptr(),
            cb.len(),
            ce.as_ptr(),
            ce.len(),
            &mut out,
        )
    });
    assert_eq!(
        call_logic(rs_call_logic_render_ref, json!({"objects": objects})).unwrap(),
        json!(take_text(out))
    );
    let parsed = call_logic(
        rs_call_logic_parse_keys,
        json!({"release": release, "keys": [format!("ns/app/renders/{old_ref}"), "ns/app/other"]}),
    )
    .unwrap();
    assert_eq!(parsed, json!([{"tag": "render", "val": old_ref}, null]));
    assert_eq!(
        call_logic(rs_call_logic_defaults, json!({})).unwrap()["keepHistory"],
        json!(10)
    );
    // A result that is not the error variant is answered whole.
    let pin = call_logic(
        rs_call_logic_pin_decision,
        json!({"pin": null, "currentRef": old_ref, "hasStore": true}),
    )
    .unwrap();
    assert_eq!(pin, json!({"tag": "ok", "val": null}));
    unsafe { rs_store_free(store) };
}

#[test]
fn a_bad_json_argument_is_refused_naming_it_and_changes_nothing() {
    use serde_json::json;
    let m = leak();
    let store = new_store(m, null());
    let release = json!({"namespace": "ns", "name": "app"});
    let refused =
        |args: serde_json::Value| call_store(rs_call_store_put_render, store, args).unwrap_err();
    let (kind, message) =
        refused(json!({"release": release, "objects": {"bytes": "!!", "ends": [1]}}));
    assert_eq!(kind, RS_ERROR_INVALID_INPUT, "{message}");
    assert!(
        message.contains("objects.bytes") && message.contains("base64"),
        "{message}"
    );
    let (_, message) =
        refused(json!({"release": release, "objects": {"bytes": "", "ends": []}, "extra": 1}));
    assert!(
        message.contains("extra") && message.contains("no such parameter"),
        "{message}"
    );
    let (_, message) =
        refused(json!({"release": {"namespace": "ns"}, "objects": {"bytes": "", "ends": []}}));
    assert!(message.contains("release.name"), "{message}");
    let (_, message) =
        call_logic(rs_call_logic_validate_render_ref, json!({"renderRef": 7})).unwrap_err();
    assert!(
        message.contains("renderRef") && message.contains("a string"),
        "{message}"
    );
    // Not JSON at all.
    let mut out = rs_buf::EMPTY;
    let (kind, message) =
        check(unsafe { rs_call_logic_defaults(null(), b"{".as_ptr(), 1, &mut out) }).unwrap_err();
    assert_eq!(kind, RS_ERROR_INVALID_INPUT, "{message}");
    assert!(
        m.objects.lock().unwrap().is_empty(),
        "a refused call wrote to the bucket"
    );
    unsafe { rs_store_free(store) };
}
