import render_store as rs

objects = [b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":{"k":"v"}}']
ref = rs.render_ref(objects)                      # what the controller computes
store = rs.RenderStore(rs.MemoryBucket())         # or rs.open("file:///var/renders")
assert store.put_render("default/app", objects) == ref
store.record_history("default/app", render_ref=ref, synced_at="2026-01-01T00:00:00Z", summary="sync")
print(ref, store.get_render("default/app", ref).decode(), end="")
plan = store.gc("default/app", keep=1, grace_seconds=0)
print("gc kept", len(plan.keep_renders), "render(s), deleted", len(plan.delete_renders))
