package checker

import (
	"encoding/json"
	"time"
)

// violationJSON is a Violation's JSON form (docs/json-schema.md): every
// field present, zero or empty included, so that a reader never has to
// guess what a missing one means.
type violationJSON struct {
	Kind        Kind     `json:"kind"`
	Lock        string   `json:"lock"`
	Clients     []string `json:"clients"`
	FromNS      int64    `json:"from_ns"`
	ToNS        int64    `json:"to_ns"`
	Explanation string   `json:"explanation"`
}

// MarshalJSON writes v as the object simulate run -json prints and
// compare's partial results store: kind, lock, clients (the holders
// involved), the interval from_ns..to_ns of world time in nanoseconds, and
// the explanation (Detail). Faults are left out: they are history records,
// which the run's history holds (run -out), and the encoding must be one
// that UnmarshalJSON reads back to the same String().
func (v Violation) MarshalJSON() ([]byte, error) {
	clients := v.Holders
	if clients == nil {
		clients = []string{}
	}
	return json.Marshal(violationJSON{Kind: v.Kind, Lock: v.Lock, Clients: clients, FromNS: int64(v.From), ToNS: int64(v.To), Explanation: v.Detail})
}

// UnmarshalJSON reads what MarshalJSON writes (Faults stay nil).
func (v *Violation) UnmarshalJSON(b []byte) error {
	var j violationJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if len(j.Clients) == 0 {
		j.Clients = nil
	}
	*v = Violation{Kind: j.Kind, Lock: j.Lock, Holders: j.Clients, From: time.Duration(j.FromNS), To: time.Duration(j.ToNS), Detail: j.Explanation}
	return nil
}
