package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// apiError answers {"error": "…"} with the status; the message is redacted of any
// password it might carry.
func apiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": target.RedactString(msg)})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeRaw(w, b)
}

func writeRaw(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// pathID reads the {id} of the request's path.
func pathID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("%q is not a run or experiment id: give a whole number", r.PathValue("id")))
		return 0, false
	}
	return id, true
}

// storeError answers 404 for what does not exist, 500 otherwise.
func storeError(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrNotFound) {
		apiError(w, http.StatusNotFound, err.Error())
		return
	}
	apiError(w, http.StatusInternalServerError, err.Error())
}
