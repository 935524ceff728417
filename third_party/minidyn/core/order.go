package core

import (
	"strconv"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/types"
)

// Key order. DynamoDB keeps a partition's items in sort key order: strings
// and binary values bytewise, numbers by value. Key strings (GetKey) write
// numbers as text, where "10" comes before "9" and "1.0" differs from "1",
// so the B-trees of the table and of its indexes are ordered by an order
// string instead: the key values, each encoded so that comparing two order
// strings byte by byte compares their tuples of values as DynamoDB does.
//
// Each value is its bytes (numbers encoded below) with every 0x00 written
// as 0x00 0xFF, then the terminator 0x00 0x01. A value that is a prefix of
// another therefore orders first, and the encoded hash key is a prefix of
// exactly the order strings of its partition.

// elementEnd ends each encoded value.
const elementEnd = "\x00\x01"

// orderOf returns the order string of item's values of the named key
// attributes, in turn; an empty name (no range key) is skipped.
func orderOf(defs map[string]string, item map[string]*types.Item, names ...string) string {
	var b strings.Builder

	for _, name := range names {
		if name != "" {
			appendElement(&b, orderedValue(item[name], defs[name]))
		}
	}

	return b.String()
}

// partitionOrder is the prefix of the order strings of the items whose
// hash key has the value val.
func partitionOrder(val *types.Item, typ string) string {
	var b strings.Builder

	appendElement(&b, orderedValue(val, typ))

	return b.String()
}

// partitionEnd is the least string above every order string with the
// given partition prefix.
func partitionEnd(prefix string) string {
	return strings.TrimSuffix(prefix, elementEnd) + "\x00\x02"
}

func appendElement(b *strings.Builder, v string) {
	b.WriteString(strings.ReplaceAll(v, "\x00", "\x00\xff"))
	b.WriteString(elementEnd)
}

// orderedValue is the bytes of a key value that order as DynamoDB orders
// values of its type; a missing value is empty and orders first.
func orderedValue(val *types.Item, typ string) string {
	switch {
	case val == nil:
		return ""
	case typ == "N" && val.N != nil:
		return orderedNumber(*val.N)
	case typ == "B":
		return string(val.B)
	}

	return types.StringValue(val.S)
}

// orderedNumber encodes a decimal number so that encodings order as the
// numbers do, and equal numbers ("1", "1.0", "10e-1") encode alike: a
// class byte (0 negative, 1 zero, 2 positive), then for non-zero numbers
// the exponent e of 0.d1d2... × 10^e as five digits and the significant
// digits, both complemented for negative numbers, which end with '~' so
// that a longer run of their digits orders first. A string that is not a
// number is returned as it is.
func orderedNumber(s string) string {
	negative := strings.HasPrefix(s, "-")
	digits, exp, ok := significand(strings.TrimLeft(s, "+-"))

	switch {
	case !ok:
		return s
	case digits == "":
		return "1"
	case !negative:
		return "2" + exponentDigits(exp) + digits
	}

	return "0" + complement(exponentDigits(exp)) + complement(digits) + "~"
}

// significand splits an unsigned decimal number into its significant
// digits (no leading or trailing zeros; empty for zero) and the exponent e
// with value 0.digits × 10^e.
func significand(s string) (string, int, bool) {
	mantissa, exp := s, 0

	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return "", 0, false
		}

		mantissa, exp = s[:i], e
	}

	whole, fraction, _ := strings.Cut(mantissa, ".")
	all := whole + fraction

	if all == "" || strings.Trim(all, "0123456789") != "" {
		return "", 0, false
	}

	trimmed := strings.TrimLeft(all, "0")
	exp += len(whole) - (len(all) - len(trimmed))

	return strings.TrimRight(trimmed, "0"), exp, true
}

// exponentDigits writes an exponent, offset to be positive, in five digits.
func exponentDigits(exp int) string {
	const offset = 50000

	s := strconv.Itoa(exp + offset)

	return strings.Repeat("0", max(0, 5-len(s))) + s
}

// complement replaces each digit d by 9-d.
func complement(digits string) string {
	out := []byte(digits)
	for i, c := range out {
		out[i] = '9' - (c - '0')
	}

	return string(out)
}
