package renderstore

/*
#include "render_store.h"
*/
import "C"

import (
	"context"
	"math"
)

// DefaultContext is the lines of context the diffs show around each change, as
// diff(1) and the CLI do.
const DefaultContext = C.RS_DEFAULT_CONTEXT

// Form is how the diffs and ShowObjects write each object.
type Form uint32

const (
	// FormYAML writes each object as YAML, as `kubectl get -o yaml` shows it (the
	// default).
	FormYAML Form = C.RS_FORM_YAML
	// FormJSON writes each object as Go's json.MarshalIndent with two spaces.
	FormJSON Form = C.RS_FORM_JSON
)

// ObjectID names an object of a render.
type ObjectID struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
}

// ChangedObject is an object in both renders whose content differs.
type ChangedObject struct {
	ObjectID
	// Lines are its unified-diff lines: hunk headers (with the YAML path of the
	// change) and lines prefixed by " ", "-" or "+".
	Lines []string `json:"diff"`
}

// WholeObject is an object only one of the renders holds, whole: what kubectl diff
// and helm-diff show of an object that comes or goes.
type WholeObject struct {
	ObjectID
	// Text is the object in the diff's Form, Secret values masked unless ShowSecrets.
	Text string `json:"text"`
}

// Diff is what changed from one render to another, object by object.
type Diff struct {
	// Added are the objects only the new render holds, in its order.
	Added []WholeObject `json:"added"`
	// Changed are the objects both hold with different content, in the new order.
	Changed []ChangedObject `json:"changed"`
	// Removed are the objects only the old render holds, in its order.
	Removed []WholeObject `json:"removed"`
	// Unchanged counts the objects both hold alike.
	Unchanged int `json:"unchanged"`
}

// Equal reports whether the two renders hold the same objects.
func (d *Diff) Equal() bool {
	return len(d.Added) == 0 && len(d.Changed) == 0 && len(d.Removed) == 0
}

type diffConfig struct {
	form    Form
	secrets C.uint32_t
	context C.uint32_t
}

// DiffOption changes how a diff is written.
type DiffOption func(*diffConfig)

// DiffForm writes the changed objects' lines in form (default FormYAML).
func DiffForm(form Form) DiffOption { return func(c *diffConfig) { c.form = form } }

// ShowSecrets shows Secret values as stored. Without it they are masked with
// kubectl diff's markers (`***`, `*** (before)`, `*** (after)`): use it only for a user
// who asked.
func ShowSecrets() DiffOption { return func(c *diffConfig) { c.secrets = C.RS_SECRETS_SHOWN } }

// DiffContext shows lines of context around each change (default DefaultContext); a
// negative number shows each changed object whole.
func DiffContext(lines int) DiffOption {
	return func(c *diffConfig) {
		if lines < 0 || lines > math.MaxUint32 {
			c.context = math.MaxUint32
		} else {
			c.context = C.uint32_t(lines)
		}
	}
}

func diffOptions(opts []DiffOption) diffConfig {
	c := diffConfig{form: FormYAML, secrets: C.RS_SECRETS_MASKED, context: DefaultContext}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Diff compares two stored renders of the release, from (the old one; "" for the
// newest history entry's, ErrNoHistory when the history is empty) to to (the new
// one), through a read-only view of the store.
func (s *Store) Diff(ctx context.Context, namespace, name, from, to string, opts ...DiffOption) (*Diff, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	c := diffOptions(opts)
	var d Diff
	err := s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		t, tLen := cstr(to)
		f, fLen := optstr(from)
		var out C.rs_buf
		if err := takeError(C.rs_store_diff(h, ns, nsLen, n, nLen, t, tLen, f, fLen, C.uint32_t(c.form), c.secrets, c.context, &out)); err != nil {
			return err
		}
		return decode(&out, &d)
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// DiffLocal is what applying a render that is not stored would change: the diff from
// the stored render from ("" for the newest history entry's) to canonical (the
// canonical bytes of a render, from Canonical or YAMLCanonical). It only reads.
func (s *Store) DiffLocal(ctx context.Context, namespace, name, from string, canonical []byte, opts ...DiffOption) (*Diff, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	c := diffOptions(opts)
	var d Diff
	err := s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		r, rLen := cbytes(canonical)
		f, fLen := optstr(from)
		var out C.rs_buf
		if err := takeError(C.rs_store_diff_local(h, ns, nsLen, n, nLen, r, rLen, f, fLen, C.uint32_t(c.form), c.secrets, c.context, &out)); err != nil {
			return err
		}
		return decode(&out, &d)
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// DiffRenders compares two canonical renders, old to new, with no store.
func DiffRenders(old, new []byte, opts ...DiffOption) (*Diff, error) {
	c := diffOptions(opts)
	o, oLen := cbytes(old)
	n, nLen := cbytes(new)
	var out C.rs_buf
	if err := takeError(C.rs_diff_renders(nil, o, oLen, n, nLen, C.uint32_t(c.form), c.secrets, c.context, &out)); err != nil {
		return nil, err
	}
	var d Diff
	if err := decode(&out, &d); err != nil {
		return nil, err
	}
	return &d, nil
}
