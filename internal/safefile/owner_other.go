//go:build !unix

package safefile

import "io/fs"

// noFollow: no such open flag; links are still refused by Lstat before use.
const noFollow = 0

// modeBits: Windows reports 0666 for any writable file and keeps who may write in ACLs,
// which this package does not read; the mode check would refuse every file.
const modeBits = false

// uidOf: files have no Unix owner here.
func uidOf(fs.FileInfo) (int, bool) { return 0, false }
