package scripts

import "strings"

// KeySlot is the Redis Cluster hash slot of key, as CLUSTER KEYSLOT
// answers it: CRC16 (the XMODEM variant: polynomial 0x1021, initial value
// 0) of the key's hash tag, or of the whole key when it has none
// (hasHashTag's rule: the bytes between the first "{" and the first "}"
// after it, if there is at least one), modulo 16384. A script may only
// name keys of one slot on a Cluster (else CROSSSLOT), so the watchdog
// groups the holds it renews in one script by it.
func KeySlot(key string) int {
	if hasHashTag(key) {
		open := strings.IndexByte(key, '{')
		end := strings.IndexByte(key[open+1:], '}')
		key = key[open+1 : open+1+end]
	}
	return int(crc16(key) % 16384)
}

// crc16 is CRC-16/XMODEM of s, bit by bit (a slot is computed once per
// renewed hold and run, which needs no table).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
