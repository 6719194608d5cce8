package cli

import "errors"

// onceString is a string flag that may be given once: for an option that
// names the input or how it is judged, a second one silently winning
// would check something other than what the caller meant.
type onceString struct {
	p   *string
	set *bool // shared by the registrations of one option
}

func once(p *string) *onceString { return &onceString{p: p, set: new(bool)} }

func (o *onceString) String() string {
	if o == nil || o.p == nil {
		return ""
	}
	return *o.p
}

func (o *onceString) Type() string { return "string" }

func (o *onceString) Set(v string) error {
	if *o.set {
		return errors.New("given more than once; give it once")
	}
	*o.p, *o.set = v, true
	return nil
}
