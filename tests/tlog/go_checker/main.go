// The independent check of a store's transparency log with Go's reference code
// (golang.org/x/mod/sumdb/note and /tlog, Debian golang-golang-x-mod-dev):
//
//	checker LOGDIR VERIFIER
//
// opens LOGDIR/checkpoint with note.Open and the verifier key, recomputes the root from the
// entry bundles with tlog.StoredHashes and tlog.TreeHash, compares every hash tile with
// tlog.ReadTileData and checks every leaf's inclusion proof (tlog.ProveRecord, CheckRecord).
// On success it prints "ok SIZE ROOT" and one line "leaf INDEX BASE64" per entry.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func indexPath(n int64) string {
	s := fmt.Sprintf("%03d", n%1000)
	for n >= 1000 {
		n /= 1000
		s = fmt.Sprintf("x%03d/%s", n%1000, s)
	}
	return s
}

func main() {
	if len(os.Args) != 3 {
		fail("usage: checker LOGDIR VERIFIER")
	}
	dir, vkey := os.Args[1], os.Args[2]
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		fail("verifier: %v", err)
	}
	msg, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		fail("checkpoint: %v", err)
	}
	n, err := note.Open(msg, note.VerifierList(verifier))
	if err != nil {
		fail("note.Open: %v", err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 || lines[0] != verifier.Name() {
		fail("checkpoint body: %q", n.Text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("size: %v", err)
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		fail("root: %q", lines[2])
	}
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			if x >= int64(len(stored)) {
				return nil, fmt.Errorf("hash %d not stored", x)
			}
			out[i] = stored[x]
		}
		return out, nil
	})
	var leaves [][]byte
	for start := int64(0); start < size; start += 256 {
		width := size - start
		p := "tile/entries/" + indexPath(start/256)
		if width < 256 {
			p += fmt.Sprintf(".p/%d", width)
		} else {
			width = 256
		}
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			fail("%s: %v", p, err)
		}
		for i := int64(0); i < width; i++ {
			if len(data) < 2 {
				fail("%s: cut off", p)
			}
			l := int(binary.BigEndian.Uint16(data))
			leaves = append(leaves, data[2:2+l])
			data = data[2+l:]
		}
		if len(data) != 0 {
			fail("%s: trailing bytes", p)
		}
	}
	for i, leaf := range leaves {
		hashes, err := tlog.StoredHashes(int64(i), leaf, reader)
		if err != nil {
			fail("StoredHashes: %v", err)
		}
		stored = append(stored, hashes...)
	}
	th, err := tlog.TreeHash(size, reader)
	if err != nil {
		fail("TreeHash: %v", err)
	}
	if !bytes.Equal(th[:], root) {
		fail("root mismatch: tlog.TreeHash %s, checkpoint %s", th, lines[2])
	}
	for _, t := range tlog.NewTiles(8, 0, size) {
		want, err := tlog.ReadTileData(t, reader)
		if err != nil {
			fail("ReadTileData: %v", err)
		}
		p := fmt.Sprintf("tile/%d/%s", t.L, indexPath(t.N))
		if t.W < 256 {
			p += fmt.Sprintf(".p/%d", t.W)
		}
		got, err := os.ReadFile(filepath.Join(dir, p))
		final := t.W == 256 || int64(t.W) == (size>>(8*uint(t.L)))%256
		if err != nil && os.IsNotExist(err) && !final {
			continue // a partial tile of a size no checkpoint of ours had
		}
		if err != nil || !bytes.Equal(got, want) {
			fail("%s: differs from tlog.ReadTileData (%v)", p, err)
		}
	}
	for i, leaf := range leaves {
		proof, err := tlog.ProveRecord(size, int64(i), reader)
		if err != nil {
			fail("ProveRecord: %v", err)
		}
		if err := tlog.CheckRecord(proof, size, th, int64(i), tlog.RecordHash(leaf)); err != nil {
			fail("CheckRecord %d: %v", i, err)
		}
	}
	fmt.Printf("ok %d %s\n", size, lines[2])
	for i, leaf := range leaves {
		fmt.Printf("leaf %d %s\n", i, base64.StdEncoding.EncodeToString(leaf))
	}
}
