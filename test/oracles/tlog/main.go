// Command tlog-oracle checks transparency-log material with well-known implementations only, so
// the project's own Merkle and checkpoint code can be judged by something it shares no code with:
//
//   - github.com/transparency-dev/merkle (proof, rfc6962) for inclusion and consistency proofs
//     and RFC 6962 leaf hashes;
//   - golang.org/x/mod/sumdb/note for signed notes (Ed25519 verifier keys);
//   - github.com/transparency-dev/formats/log for the C2SP tlog-checkpoint body.
//
// It reads one JSON request on stdin and writes one JSON answer on stdout, each answer array in
// the order of its request array. Exit status: 0 when it ran (whatever the checks found), 2 when
// the request itself is unusable (malformed JSON, an unknown field, a bad verifier key, a hash
// that is not hex) — so a negative test cannot pass merely because its input was garbled.
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
)

type inclusionReq struct {
	Index    uint64   `json:"index"`
	Size     uint64   `json:"size"`
	LeafHash string   `json:"leaf_hash"`
	Path     []string `json:"path"`
	Root     string   `json:"root"`
}

type consistencyReq struct {
	Size1 uint64   `json:"size1"`
	Size2 uint64   `json:"size2"`
	Root1 string   `json:"root1"`
	Root2 string   `json:"root2"`
	Proof []string `json:"proof"`
}

type leafDataReq struct {
	Data     string `json:"data"`
	LeafHash string `json:"leaf_hash"`
}

type request struct {
	VerifierKeys []string         `json:"verifier_keys"`
	Origin       string           `json:"origin"`
	Checkpoints  []string         `json:"checkpoints"`
	Inclusion    []inclusionReq   `json:"inclusion"`
	Consistency  []consistencyReq `json:"consistency"`
	LeafData     []leafDataReq    `json:"leaf_data"`
}

type checkpointRes struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Size, Root and Origin only once the checkpoint is accepted: a caller must never read
	// numbers off a note that failed verification.
	Size   *uint64 `json:"size,omitempty"`
	Root   string  `json:"root,omitempty"`
	Origin string  `json:"origin,omitempty"`
	// Every trusted key whose signature verified, as "<name>+<key hash hex>", even when the
	// checkpoint is refused for its body (origin, format).
	SignedBy []string `json:"signed_by"`
}

type checkRes struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

type response struct {
	Checkpoints []checkpointRes `json:"checkpoints"`
	Inclusion   []checkRes      `json:"inclusion"`
	Consistency []checkRes      `json:"consistency"`
	LeafData    []checkRes      `json:"leaf_data"`
}

// badInput marks a request the oracle cannot judge at all (exit 2), as opposed to a check that fails.
type badInput struct{ err error }

func (b badInput) Error() string { return b.err.Error() }

func badf(format string, args ...any) error { return badInput{fmt.Errorf(format, args...)} }

func decodeHash(what, s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, badf("%s: not hex: %v", what, err)
	}
	return b, nil
}

func decodeHashes(what string, ss []string) ([][]byte, error) {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		b, err := decodeHash(fmt.Sprintf("%s[%d]", what, i), s)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	// The library prints mismatched roots as decimal byte lists; hex reads against the test's values.
	var mismatch proof.RootMismatchError
	if errors.As(err, &mismatch) {
		return fmt.Sprintf("calculated root %x does not match expected root %x", mismatch.CalculatedRoot, mismatch.ExpectedRoot)
	}
	return err.Error()
}

// verifiers parses the trusted keys, dropping exact duplicates: note.VerifierList refuses to
// choose between two verifiers of the same name and hash, which would fail every note.
func verifiers(keys []string) ([]note.Verifier, error) {
	seen := map[string]bool{}
	var out []note.Verifier
	for i, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		v, err := note.NewVerifier(k)
		if err != nil {
			return nil, badf("verifier_keys[%d]: %v", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func checkCheckpoint(text string, origin string, vs []note.Verifier) checkpointRes {
	res := checkpointRes{SignedBy: []string{}}
	if len(vs) == 0 {
		res.Error = "no verifier keys given"
		return res
	}
	msg := []byte(text)
	// note.Open with every trusted key: which of them signed (a rotation cosigns with old and
	// new key). It fails on a malformed note, on a bad signature by any trusted key, and when no
	// trusted key signed at all; signatures by unknown keys are left aside, as the spec allows.
	n, err := note.Open(msg, note.VerifierList(vs...))
	if err != nil {
		res.Error = fmt.Sprintf("note: %v", err)
		return res
	}
	for _, s := range n.Sigs {
		res.SignedBy = append(res.SignedBy, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
	}
	// ParseCheckpoint wants one of the keys as "the log's"; take the first that signed, so any
	// trusted key will do, then it parses the body and checks the origin line.
	var logV note.Verifier
	var others []note.Verifier
	first := n.Sigs[0]
	for _, v := range vs {
		if logV == nil && v.Name() == first.Name && v.KeyHash() == first.Hash {
			logV = v
		} else {
			others = append(others, v)
		}
	}
	cp, _, _, err := log.ParseCheckpoint(msg, origin, logV, others...)
	if err != nil {
		res.Error = fmt.Sprintf("checkpoint: %v", err)
		return res
	}
	// The body format takes any base64 as the root; this log's roots are SHA-256 hashes.
	if len(cp.Hash) != 32 {
		res.Error = fmt.Sprintf("checkpoint: root hash is %d bytes, want 32", len(cp.Hash))
		return res
	}
	size := cp.Size
	res.OK, res.Size, res.Root, res.Origin = true, &size, hex.EncodeToString(cp.Hash), cp.Origin
	return res
}

func checkInclusion(r inclusionReq) (checkRes, error) {
	leaf, err := decodeHash("leaf_hash", r.LeafHash)
	if err != nil {
		return checkRes{}, err
	}
	path, err := decodeHashes("path", r.Path)
	if err != nil {
		return checkRes{}, err
	}
	root, err := decodeHash("root", r.Root)
	if err != nil {
		return checkRes{}, err
	}
	err = proof.VerifyInclusion(rfc6962.DefaultHasher, r.Index, r.Size, leaf, path, root)
	return checkRes{OK: err == nil, Error: errText(err)}, nil
}

func checkConsistency(r consistencyReq) (checkRes, error) {
	root1, err := decodeHash("root1", r.Root1)
	if err != nil {
		return checkRes{}, err
	}
	root2, err := decodeHash("root2", r.Root2)
	if err != nil {
		return checkRes{}, err
	}
	p, err := decodeHashes("proof", r.Proof)
	if err != nil {
		return checkRes{}, err
	}
	err = proof.VerifyConsistency(rfc6962.DefaultHasher, r.Size1, r.Size2, p, root1, root2)
	return checkRes{OK: err == nil, Error: errText(err)}, nil
}

func checkLeafData(r leafDataReq) (checkRes, error) {
	want, err := decodeHash("leaf_hash", r.LeafHash)
	if err != nil {
		return checkRes{}, err
	}
	got := rfc6962.DefaultHasher.HashLeaf([]byte(r.Data))
	if !bytes.Equal(got, want) {
		return checkRes{Error: fmt.Sprintf("leaf hash of data is %x, want %x", got, want)}, nil
	}
	return checkRes{OK: true}, nil
}

func run(in io.Reader) (*response, error) {
	var req request
	dec := json.NewDecoder(in)
	// A misspelt field would otherwise read as an empty list and "pass".
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, badf("request: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badf("request: more than one JSON value on stdin")
	}
	vs, err := verifiers(req.VerifierKeys)
	if err != nil {
		return nil, err
	}
	res := &response{Checkpoints: []checkpointRes{}, Inclusion: []checkRes{}, Consistency: []checkRes{}, LeafData: []checkRes{}}
	for _, c := range req.Checkpoints {
		res.Checkpoints = append(res.Checkpoints, checkCheckpoint(c, req.Origin, vs))
	}
	for i, r := range req.Inclusion {
		c, err := checkInclusion(r)
		if err != nil {
			return nil, fmt.Errorf("inclusion[%d].%w", i, err)
		}
		res.Inclusion = append(res.Inclusion, c)
	}
	for i, r := range req.Consistency {
		c, err := checkConsistency(r)
		if err != nil {
			return nil, fmt.Errorf("consistency[%d].%w", i, err)
		}
		res.Consistency = append(res.Consistency, c)
	}
	for i, r := range req.LeafData {
		c, err := checkLeafData(r)
		if err != nil {
			return nil, fmt.Errorf("leaf_data[%d].%w", i, err)
		}
		res.LeafData = append(res.LeafData, c)
	}
	return res, nil
}

func main() {
	res, err := run(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tlog-oracle: %v\n", err)
		var bad badInput
		if errors.As(err, &bad) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintf(os.Stderr, "tlog-oracle: writing the answer: %v\n", err)
		os.Exit(1)
	}
}
