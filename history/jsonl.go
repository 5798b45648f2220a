package history

import (
	"bufio"
	"encoding/json"
	"io"
)

// WriteJSONL writes records as JSON lines, one record per line in the
// field order of Record, empty fields omitted: the byte-stable format that
// golden files and `simulate check` read.
func WriteJSONL(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}
