//! The wasmtime embedding: one engine, the component compiled once, a pre-instantiated
//! template, and a fresh sandboxed instance per call.
//!
//! Each call gets its own store with a memory cap and a fuel budget (a CPU bound that
//! counts only guest work, not time spent waiting on the bucket), and a bucket scoped
//! to the prefix of the release it serves: the guest can reach no other key.

use crate::component_cache::Source;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::Semaphore;
use wasmtime::component::{InstancePre, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};

mod bindings;
mod call_log;
mod call_state;
pub(crate) mod engine_config;
mod errors;
mod limits;
mod world;

pub(crate) use bindings::{joined_arg, objects_arg, wit, wit_trace};
pub(crate) use call_log::{CallLog, RecordedCall};
pub(crate) use call_state::{CallState, Scope};
pub(crate) use errors::{error_to_wit, from_wit};
use errors::{sandbox, trap};
use limits::CallLimiter;
pub use limits::Limits;

/// Instantiates the component with a bucket scope (or none), calls one export and turns
/// its answer into the host's result: the body every call of the API shares.
/// `infallible` marks an export whose WIT result is not a `result`.
macro_rules! call_export {
    ($rt:expr, $scope:expr, $interface:ident . $export:ident ( $($arg:expr),* $(,)? )) => {{
        let rt: &$crate::runtime::Runtime = $rt;
        let (mut call, instance) = rt.instantiate($scope).await?;
        let result = instance.$interface().$export(&mut call.store, $($arg),*).await;
        rt.finish(call, result)
    }};
    (infallible $rt:expr, $scope:expr, $interface:ident . $export:ident ( $($arg:expr),* $(,)? )) => {{
        let rt: &$crate::runtime::Runtime = $rt;
        let (mut call, instance) = rt.instantiate($scope).await?;
        let result = instance.$interface().$export(&mut call.store, $($arg),*).await;
        rt.finish(call, result.map(Ok))
    }};
}
pub(crate) use call_export;

/// One call's store and the instance slot it holds. The fields drop in their order: the
/// store, and the pool's instance with it, before the slot. A slot freed with the
/// store's data came free before wasmtime gave the instance back to the pool, and under
/// load the next call took it and found the pool full.
pub(crate) struct Call {
    /// The call's store.
    pub(crate) store: Store<CallState>,
    _slot: tokio::sync::OwnedSemaphorePermit,
}

/// The process-wide runtime of [`Runtime::shared`].
static SHARED: OnceLock<Arc<Runtime>> = OnceLock::new();

/// Bytes of a freed slot's memory zeroed in place rather than returned to the kernel:
/// the guest's whole initial memory (its 64 KiB stack, its data and the heap a small call
/// uses; host/render-store/build.rs), so a small call neither faults pages in nor makes
/// the kernel flush them out again (BENCHMARKS.md, call cost).
const KEEP_RESIDENT: usize = 256 * 1024;

/// The most address space one linear memory can use: 32-bit WebAssembly addresses.
const MAX_RESERVATION: usize = 4 << 30;

/// The compiled component and its template, shared by every call.
pub struct Runtime {
    engine: Engine,
    pre: InstancePre<CallState>,
    exports: world::Exports,
    limits: Limits,
    peak_memory: AtomicUsize,
    slots: Arc<Semaphore>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("limits", &self.limits)
            .finish()
    }
}

impl Runtime {
    /// Compiles the embedded component with the given limits, or loads it compiled
    /// from the compiled-component cache (docs/rust.md, `RENDER_STORE_CACHE_DIR`).
    pub fn new(limits: Limits) -> Result<Self> {
        Self::build(Source::Embedded, limits)
    }

    /// Runs another build of the component (one `render-store component --out` wrote
    /// from a different version, or a test's): it must export the same world and
    /// import nothing but the bucket.
    pub fn with_component(component: &[u8], limits: Limits) -> Result<Self> {
        Self::build(Source::Given(component), limits)
    }

    fn build(component: Source<'_>, limits: Limits) -> Result<Self> {
        let slots = limits.concurrent_calls.max(1);
        let engine = Self::engine(component, limits)?;
        let component =
            crate::component_cache::load_or_compile(&engine, component).map_err(sandbox)?;
        let mut linker = Linker::new(&engine);
        world::add_bucket_to_linker(&mut linker).map_err(sandbox)?;
        let pre = linker.instantiate_pre(&component).map_err(sandbox)?;
        // Every export's type is checked here, once: a component built from another WIT
        // is refused when it loads, with the export and the difference named.
        let exports = world::Exports::new(&pre).map_err(sandbox)?;
        Ok(Runtime {
            engine,
            pre,
            exports,
            limits,
            peak_memory: AtomicUsize::new(0),
            slots: Arc::new(Semaphore::new(slots as usize)),
        })
    }

    /// The engine for `limits`. With the `precompiled` feature, the embedded component
    /// runs on an engine set as build.rs set the one that compiled it (the build's
    /// target, the portable CPU features), so its code is loaded rather than compiled;
    /// on a machine without those features, on one that compiles for this machine's.
    fn engine(component: Source<'_>, limits: Limits) -> Result<Engine> {
        let slots = limits.concurrent_calls.max(1);
        let page = 64 * 1024;
        // A 32-bit memory cannot grow past 4 GiB: a larger cap only never binds.
        let memory = (limits.memory_bytes.div_ceil(page).max(1) * page).min(MAX_RESERVATION);
        let configure = |portable: Option<&str>| -> Result<Engine> {
            let mut config = Config::new();
            // Each memory slot reserves address space for the cap (wasmtime's default
            // is 4 GiB whatever the cap), so a pool reserves about slots × 2 × (cap +
            // guard): 64 calls with a 1 GiB cap reserve ~130 GiB, not ~520 GiB. Below
            // 4 GiB the compiled code checks bounds explicitly instead of relying on
            // the reservation.
            engine_config::compile_settings(&mut config, memory as u64);
            if let Some(triple) = portable {
                engine_config::portable_target(&mut config, triple).map_err(sandbox)?;
            }
            let mut pool = PoolingAllocationConfig::default();
            pool.total_component_instances(slots)
                .total_core_instances(slots * 4)
                .total_memories(slots * 2)
                .total_tables(slots * 4)
                // One fiber stack per call in flight (wasmtime's default pool protects
                // the guard pages of 1,000 stacks at start: a thousand mprotect calls).
                .total_stacks(slots)
                .max_memory_size(memory)
                .linear_memory_keep_resident(KEEP_RESIDENT)
                .table_keep_resident(KEEP_RESIDENT);
            // Where calls may run at once, instances come from a pool of pre-reserved
            // slots: instantiation reuses a slot's memory instead of mapping and
            // unmapping it for every call. One call at a time (a command of the CLI)
            // maps its instance when it needs one: setting up a pool costs a process
            // more than the calls it saves.
            if slots > 1 {
                config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
            }
            Engine::new(&config).map_err(sandbox)
        };
        #[cfg(feature = "precompiled")]
        if matches!(component, Source::Embedded) {
            match configure(Some(crate::embedded::PRECOMPILED_TARGET)) {
                Ok(engine) => return Ok(engine),
                Err(e) => tracing::warn!(
                    "the precompiled render-store component cannot run here ({e}); \
                     compiling it for this machine"
                ),
            }
        }
        let _ = component;
        configure(None)
    }

    /// The process-wide runtime, compiled on first use with the limits given to
    /// [`Runtime::init_shared`], or the defaults.
    pub fn shared() -> Result<Arc<Runtime>> {
        match SHARED.get() {
            Some(rt) => Ok(rt.clone()),
            None => Self::init_shared(Limits::default()),
        }
    }

    /// Sets the limits of the process-wide runtime and compiles it. Calling it again
    /// with the same limits returns the same runtime; with others, an error (the
    /// runtime is already in use).
    pub fn init_shared(limits: Limits) -> Result<Arc<Runtime>> {
        let rt = match SHARED.get() {
            Some(rt) => rt.clone(),
            None => {
                let rt = Arc::new(Runtime::new(limits)?);
                SHARED.get_or_init(|| rt).clone()
            }
        };
        if rt.limits != limits {
            return Err(Error::Runtime(format!(
                "the shared runtime already runs with {:?}; it cannot change to {limits:?}",
                rt.limits
            )));
        }
        Ok(rt)
    }

    /// The limits every call gets.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The most linear memory any call of this runtime has used, in bytes.
    pub fn peak_memory_bytes(&self) -> usize {
        self.peak_memory.load(Ordering::Relaxed)
    }

    /// A fresh instance in its own store, with `bucket` (or none) as its only capability.
    pub(crate) async fn instantiate(
        &self,
        bucket: Option<Scope>,
    ) -> Result<(Call, world::Bound<'_>)> {
        // Declared before the store, so that on an early return the store drops first.
        let slot = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::Runtime("the runtime is shutting down".into()))?;
        let state = CallState {
            limiter: CallLimiter {
                memory_cap: self.limits.memory_bytes,
                peak: 0,
                refused: None,
            },
            bucket,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limiter);
        store.set_fuel(self.limits.fuel).map_err(sandbox)?;
        // What the guest hands the host in one call (a blob to put, the objects of a
        // stream) cannot be larger than its memory, which the cap bounds already; the
        // engine's own bound on it is lower (128 MiB), and hit, it stopped a call the
        // cap allows with a message about fuel that named nothing the user can set.
        store.set_hostcall_fuel(self.limits.memory_bytes);
        // Guest code runs inside a future on the async workers: without yield points a
        // long call (a diff of two large renders takes seconds) holds its worker thread
        // and stalls every other task on it, /healthz included. 10 million units are a
        // few milliseconds of guest work (about one unit per instruction): other tasks
        // wait no longer than that, and the cost of a yield (a fiber switch and a trip
        // through the scheduler) is lost in the noise.
        const YIELD_EVERY_FUEL: u64 = 10_000_000;
        store
            .fuel_async_yield_interval(Some(YIELD_EVERY_FUEL))
            .map_err(sandbox)?;
        let instance = self
            .pre
            .instantiate_async(&mut store)
            .await
            .map_err(|e| trap(e, store.data().limiter.refused, self.limits))?;
        Ok((Call { store, _slot: slot }, self.exports.bind(instance)))
    }

    /// Turns what an export returned into the host's result.
    pub(crate) fn finish<T>(
        &self,
        call: Call,
        result: wasmtime::Result<Result<T, wit::Error>>,
    ) -> Result<T> {
        let state = call.store.data();
        self.peak_memory
            .fetch_max(state.limiter.peak, Ordering::Relaxed);
        match result {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(from_wit(e)),
            Err(e) => Err(trap(e, state.limiter.refused, self.limits)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bindings::wit_bucket;
    use super::world::BucketImport as _;
    use super::*;
    use crate::bucket::{ObjectStoreBucket, RecordingBucket, messages};
    use crate::types::SyncTime;

    fn limiter() -> CallLimiter {
        CallLimiter {
            memory_cap: usize::MAX,
            peak: 0,
            refused: None,
        }
    }

    fn state(recorder: &Arc<RecordingBucket>) -> CallState {
        CallState {
            limiter: limiter(),
            bucket: Some(Scope {
                bucket: recorder.clone(),
                prefix: "ns/app/".to_string(),
                log: None,
            }),
        }
    }

    fn recorder() -> Arc<RecordingBucket> {
        let mem = Arc::new(object_store::memory::InMemory::new());
        Arc::new(RecordingBucket::new(Arc::new(ObjectStoreBucket::new(mem))))
    }

    #[tokio::test]
    async fn keys_outside_the_release_prefix_are_refused_before_the_bucket() {
        let recorder = recorder();
        let mut s = state(&recorder);
        for key in ["ns/app2/renders/x", "ns/ap", "other/app/x", "", "ns/app"] {
            let denied = |r: Result<(), wit_bucket::BucketError>| {
                assert!(
                    matches!(r, Err(wit_bucket::BucketError::Denied(ref m)) if m.contains("outside")),
                    "{key:?}: {r:?}"
                )
            };
            denied(s.get(key.into()).await.map(|_| ()));
            denied(s.put(key.into(), b"x".to_vec()).await);
            denied(s.exists(key.into()).await.map(|_| ()));
            denied(s.list(key.into()).await.map(|_| ()));
            denied(s.delete(key.into()).await);
        }
        assert_eq!(recorder.take_calls(), []);
        s.put("ns/app/renders/x".into(), b"x".to_vec())
            .await
            .unwrap();
        let listed = s.list("ns/app/".into()).await.unwrap();
        let keys: Vec<_> = listed.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["ns/app/renders/x"]);
        assert_eq!(recorder.take_calls().len(), 2);
    }

    /// The bucket gets the bytes the component gives, byte for byte (UTF-8 or not), and
    /// `get` answers them.
    #[tokio::test]
    async fn a_put_stores_the_bytes_as_given() {
        let recorder = recorder();
        let mut s = state(&recorder);
        s.put("ns/app/t".into(), "é\n".as_bytes().to_vec())
            .await
            .unwrap();
        s.put("ns/app/r".into(), b"\xff{}".to_vec()).await.unwrap();
        assert_eq!(
            s.get("ns/app/t".into()).await.unwrap(),
            "é\n".as_bytes().to_vec()
        );
        assert_eq!(s.get("ns/app/r".into()).await.unwrap(), b"\xff{}".to_vec());
    }

    /// The scope's refusal is worded as tests/vectors/messages.json (and so as the Node
    /// and Python hosts) word it, for hostile keys too.
    #[tokio::test]
    async fn the_scope_refuses_in_the_shared_words() {
        let vectors: serde_json::Value =
            serde_json::from_str(include_str!("../../../../tests/vectors/messages.json")).unwrap();
        let recorder = recorder();
        let mut s = state(&recorder);
        let mut checked = 0;
        for case in vectors["cases"].as_array().unwrap() {
            if case["message"] != "outside-prefix" || case["prefix"] != "ns/app/" {
                continue;
            }
            let key = case["key"].as_str().unwrap();
            let want = wit_bucket::BucketError::Denied(case["want"].as_str().unwrap().into());
            assert_eq!(s.get(key.into()).await.unwrap_err(), want);
            assert_eq!(s.delete(key.into()).await.unwrap_err(), want);
            checked += 1;
        }
        assert!(checked >= 4, "{checked}");
        assert_eq!(recorder.take_calls(), []);
    }

    #[tokio::test]
    async fn delete_many_refuses_keys_outside_the_prefix_one_by_one() {
        let recorder = recorder();
        let mut s = state(&recorder);
        s.put("ns/app/a".into(), b"a".to_vec()).await.unwrap();
        s.put("ns/app/b".into(), b"b".to_vec()).await.unwrap();
        recorder.take_calls();
        let keys = ["ns/app/a", "ns/app2/x", "ns/app/b", "ns/app/absent"].map(String::from);
        let answers = s.delete_many(keys.to_vec()).await.unwrap();
        assert_eq!(answers.len(), 4);
        assert!(answers[0].is_ok() && answers[2].is_ok() && answers[3].is_ok());
        assert_eq!(
            answers[1],
            Err(wit_bucket::BucketError::Denied(messages::outside_prefix(
                "ns/app2/x",
                "ns/app/"
            )))
        );
        // Only the keys inside reach the bucket, in one call.
        assert_eq!(
            recorder.take_calls(),
            [crate::bucket::BucketCall::DeleteMany(vec![
                keys[0].clone(),
                keys[2].clone(),
                keys[3].clone()
            ])]
        );
        assert!(s.list("ns/app/".into()).await.unwrap().is_empty());
        // All outside: the bucket is not asked at all.
        let answers = s.delete_many(vec!["other/x".into()]).await.unwrap();
        assert!(matches!(
            answers[..],
            [Err(wit_bucket::BucketError::Denied(_))]
        ));
        assert_eq!(
            recorder.take_calls(),
            [crate::bucket::BucketCall::List("ns/app/".into())]
        );
    }

    #[tokio::test]
    async fn a_call_without_a_bucket_can_reach_none() {
        let mut s = CallState {
            limiter: limiter(),
            bucket: None,
        };
        assert_eq!(
            s.get("ns/app/x".into()).await.unwrap_err(),
            wit_bucket::BucketError::Denied(messages::NO_BUCKET.into())
        );
    }

    /// Bytes in, bytes out: canonical, yaml-canonical and the blob put-render stores are
    /// the canonical bytes, whatever the objects held.
    #[tokio::test]
    async fn the_component_answers_bytes() -> Result<()> {
        let rt = Runtime::new(Limits::default()).unwrap();
        let object = r#"{"b":1,"a":"é"}"#;
        let canonical = "{\"a\":\"é\",\"b\":1}\n";
        let objects = objects_arg(&[object.as_bytes().to_vec()]);
        let got = call_export!(&rt, None, logic.canonical(&objects));
        assert_eq!(got.unwrap(), canonical.as_bytes());
        let got = call_export!(&rt, None, logic.yaml_canonical("b: 1\na: é\n".as_bytes()));
        assert_eq!(got.unwrap(), canonical.as_bytes());

        let release = wit::Release {
            namespace: "ns".into(),
            name: "app".into(),
        };
        let log = Arc::new(CallLog::default());
        let scope = Scope {
            bucket: recorder(),
            prefix: "ns/app/".into(),
            log: Some(log.clone()),
        };
        call_export!(
            &rt,
            Some(scope),
            store.put_render(
                &release,
                &objects,
                &wit::Encryption {
                    keyring: Vec::new(),
                    required: false
                }
            )
        )
        .unwrap();
        let puts: Vec<_> = log
            .take()
            .into_iter()
            .filter_map(|c| match c {
                RecordedCall::Put(p) => Some(p.value),
                _ => None,
            })
            .collect();
        assert_eq!(puts, [canonical.as_bytes().to_vec()]);
        Ok(())
    }

    /// The joined form (the C ABI's) means the same render as one object a buffer, and
    /// ends that do not split its bytes are invalid input before any bucket call.
    #[tokio::test]
    async fn joined_objects_are_the_same_render() {
        let rt = Runtime::new(Limits::default()).unwrap();
        let objects = [br#"{"b":1,"a":2}"#.to_vec(), b"{ }".to_vec()];
        let bytes = objects.concat();
        let ends = [13, 16];
        assert_eq!(
            rt.canonical_joined(&bytes, &ends).await.unwrap(),
            rt.canonical(&objects).await.unwrap()
        );
        assert_eq!(
            rt.render_ref_joined(&bytes, &ends).await.unwrap(),
            rt.render_ref(&objects).await.unwrap()
        );
        for bad in [&[16, 13][..], &[13], &[13, 17]] {
            assert!(
                matches!(
                    rt.render_ref_joined(&bytes, bad).await,
                    Err(Error::InvalidInput(_))
                ),
                "{bad:?}"
            );
        }
        let recorder = recorder();
        let store = crate::RenderStore::new(Arc::new(rt), recorder.clone());
        let release = crate::Release::new("ns", "app");
        let r = store
            .put_render_joined(&release, &bytes, &ends)
            .await
            .unwrap();
        assert_eq!(
            store.get_render(&release, &r).await.unwrap(),
            b"{\"a\":2,\"b\":1}\n{}\n"
        );
        assert!(matches!(
            store.put_render_joined(&release, &bytes, &[2]).await,
            Err(Error::InvalidInput(_))
        ));
        assert_eq!(
            recorder.take_calls().len(),
            3,
            "exists, put, get: nothing for bad ends"
        );
        assert_eq!(
            store.runtime().release_prefix(&release).await.unwrap(),
            "ns/app/"
        );
    }

    /// The default memory cap's reservation is the one build.rs precompiles for.
    #[test]
    fn the_precompiled_code_is_for_the_default_cap() {
        let page = 64 * 1024;
        let memory = Limits::DEFAULT_MEMORY_BYTES.div_ceil(page) * page;
        assert_eq!(memory as u64, engine_config::DEFAULT_MEMORY_RESERVATION);
    }

    /// With the `precompiled` feature, the engines of the default limits (a pool of 64,
    /// the library's, and one call at a time, the CLI's) load the code build.rs
    /// compiled, with no cache and no compiling; another cap compiles.
    #[cfg(feature = "precompiled")]
    #[test]
    fn the_precompiled_component_loads_into_the_default_engines() {
        use crate::component_cache::{Source, precompiled_fits};
        for slots in [64, 1] {
            let limits = Limits {
                concurrent_calls: slots,
                ..Limits::default()
            };
            let engine = Runtime::engine(Source::Embedded, limits).unwrap();
            assert!(precompiled_fits(&engine), "{slots} slots");
        }
        let other = Limits {
            memory_bytes: 64 << 20,
            ..Limits::default()
        };
        let engine = Runtime::engine(Source::Embedded, other).unwrap();
        assert!(!precompiled_fits(&engine), "another cap's code differs");
    }

    fn big_render() -> Vec<Vec<u8>> {
        let value = "x".repeat(4 << 20);
        vec![format!(r#"{{"data":"{value}"}}"#).into_bytes()]
    }

    #[tokio::test]
    async fn memory_cap_stops_one_call_only() {
        let rt = Runtime::new(Limits {
            memory_bytes: 4 << 20,
            ..Limits::default()
        })
        .unwrap();
        match rt.canonical(&big_render()).await {
            Err(Error::MemoryCap { wanted, cap }) => assert!(wanted > cap, "{wanted} {cap}"),
            other => panic!("expected the memory cap, got {:?}", other.map(|b| b.len())),
        }
        let empty = rt.render_ref(&[b"{}".to_vec()]).await.unwrap();
        assert!(empty.starts_with("sha256:"));
    }

    #[tokio::test]
    async fn a_cap_past_what_a_32_bit_memory_can_reach_still_runs() {
        let rt = Runtime::new(Limits {
            memory_bytes: 8 << 30,
            concurrent_calls: 1,
            ..Limits::default()
        })
        .unwrap();
        assert!(rt.render_ref(&big_render()).await.is_ok());
    }

    #[tokio::test]
    async fn fuel_bounds_the_cpu_of_one_call_only() {
        let rt = Runtime::new(Limits {
            fuel: 5_000_000,
            ..Limits::default()
        })
        .unwrap();
        match rt.canonical(&big_render()).await {
            Err(Error::Fuel { budget }) => assert_eq!(budget, 5_000_000),
            other => panic!("expected the CPU bound, got {:?}", other.map(|b| b.len())),
        }
        rt.render_ref(&[b"{}".to_vec()]).await.unwrap();
    }

    #[tokio::test]
    async fn times_format_alike_one_by_one_and_all_at_once() {
        let rt = Runtime::new(Limits::default()).unwrap();
        let times = [
            SyncTime {
                seconds: 0,
                nanoseconds: 0,
            },
            SyncTime {
                seconds: 1_767_225_600,
                nanoseconds: 120_000_000,
            },
            SyncTime {
                seconds: -62_135_596_800,
                nanoseconds: 1,
            },
        ];
        let all = rt.format_synced_at_all(&times).await.unwrap();
        let mut one_by_one = Vec::new();
        for t in times {
            one_by_one.push(rt.format_synced_at(t).await.unwrap());
        }
        assert_eq!(all, one_by_one);
        assert_eq!(all[1], "2026-01-01T00:00:00.12Z");
        let year_10000 = SyncTime {
            seconds: 253_402_300_800,
            nanoseconds: 0,
        };
        assert!(matches!(
            rt.format_synced_at_all(&[times[0], year_10000]).await,
            Err(Error::InvalidInput(_))
        ));
        assert_eq!(
            rt.format_synced_at_all(&[]).await.unwrap(),
            Vec::<String>::new()
        );
    }
}
