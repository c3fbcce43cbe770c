package laddercheck

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	steps := []StepResult{{Step: "batch=1", PaddedBytes: 100}, {Step: "batch=3", PaddedBytes: 40, UnpaddedBytes: 20}}
	ok := Result{Target: "paged_decode B=8", Steps: steps}
	if ok.Failed() || !strings.HasPrefix(ok.Verdict(), "ok paged_decode B=8: 2 graph steps") || !strings.Contains(ok.Verdict(), "160 bytes") {
		t.Errorf("passing: failed %v, %q", ok.Failed(), ok.Verdict())
	}
	bad := Result{Target: "t", Steps: steps}
	bad.fail(errors.New("batch=3: output y differs"))
	bad.fail(errors.New("second"))
	if !bad.Failed() || bad.Verdict() != "FAIL t: 2 failures, first: batch=3: output y differs" {
		t.Errorf("failing: failed %v, %q", bad.Failed(), bad.Verdict())
	}
	none := Result{Target: "t"}
	if !none.Failed() || !strings.HasPrefix(none.Verdict(), "FAIL t: no step") {
		t.Errorf("no step: failed %v, %q", none.Failed(), none.Verdict())
	}
	// The JSON the device writes, read back.
	path := filepath.Join(t.TempDir(), "ladder.json")
	if err := WriteResults(path, []*Result{&bad}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back []Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || !back[0].Failed() || back[0].Steps[1].UnpaddedBytes != 20 || !strings.Contains(string(data), `"unpadded_bytes": 20`) {
		t.Errorf("JSON %s read back as %+v", data, back)
	}
}

func TestWriteResultsFails(t *testing.T) {
	if err := WriteResults(filepath.Join(t.TempDir(), "no", "such", "dir"), nil); err == nil {
		t.Error("WriteResults into a missing directory: no error")
	}
}
