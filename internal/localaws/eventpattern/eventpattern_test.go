package eventpattern

import (
	"errors"
	"strings"
	"testing"
)

func TestMatches(t *testing.T) {
	t.Parallel()
	const event = `{
		"version": "0", "source": "com.shop.orders", "detail-type": "OrderPlaced",
		"account": "000000000000", "region": "us-east-1",
		"resources": ["arn:aws:s3:::a", "arn:aws:s3:::b"],
		"detail": {
			"id": "ORD-123", "amount": 300, "price": 12.5, "state": "Pending",
			"paid": true, "coupon": null, "ip": "10.0.0.20", "file": "img/photo.PNG",
			"tags": ["red", "blue"], "empty": [],
			"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 5}],
			"customer": {"tier": "gold", "address": {"country": "FR"}}
		}
	}`
	tests := []struct {
		name    string
		pattern string
		want    bool
	}{
		{"exact string", `{"source":["com.shop.orders"]}`, true},
		{"exact string other", `{"source":["com.shop.users"]}`, false},
		{"exact any of list", `{"source":["x","com.shop.orders"]}`, true},
		{"exact is case sensitive", `{"source":["COM.SHOP.ORDERS"]}`, false},
		{"several keys all match", `{"source":["com.shop.orders"],"detail-type":["OrderPlaced"]}`, true},
		{"several keys one fails", `{"source":["com.shop.orders"],"detail-type":["OrderShipped"]}`, false},
		{"nested key", `{"detail":{"customer":{"tier":["gold"]}}}`, true},
		{"deeply nested key", `{"detail":{"customer":{"address":{"country":["FR"]}}}}`, true},
		{"nested key mismatch", `{"detail":{"customer":{"tier":["silver"]}}}`, false},
		{"missing key", `{"detail":{"nope":["x"]}}`, false},
		{"number exact", `{"detail":{"amount":[300]}}`, true},
		{"number exact other form", `{"detail":{"amount":[3.0e2]}}`, true},
		{"number does not match string", `{"detail":{"amount":["300"]}}`, false},
		{"string does not match number", `{"detail":{"id":[123]}}`, false},
		{"boolean", `{"detail":{"paid":[true]}}`, true},
		{"boolean mismatch", `{"detail":{"paid":[false]}}`, false},
		{"null", `{"detail":{"coupon":[null]}}`, true},
		{"null does not match missing", `{"detail":{"nothing":[null]}}`, false},
		{"null does not match value", `{"detail":{"state":[null]}}`, false},
		{"array element", `{"detail":{"tags":["blue"]}}`, true},
		{"array no element", `{"detail":{"tags":["green"]}}`, false},
		{"resources array", `{"resources":["arn:aws:s3:::b"]}`, true},
		{"array of objects", `{"detail":{"items":{"sku":["B"]}}}`, true},
		{"array of objects no element", `{"detail":{"items":{"sku":["C"]}}}`, false},
		{"prefix", `{"detail":{"id":[{"prefix":"ORD-"}]}}`, true},
		{"prefix mismatch", `{"detail":{"id":[{"prefix":"INV-"}]}}`, false},
		{"prefix not on numbers", `{"detail":{"amount":[{"prefix":"3"}]}}`, false},
		{"prefix ignore case", `{"detail":{"id":[{"prefix":{"equals-ignore-case":"ord-"}}]}}`, true},
		{"suffix", `{"detail":{"file":[{"suffix":".PNG"}]}}`, true},
		{"suffix is case sensitive", `{"detail":{"file":[{"suffix":".png"}]}}`, false},
		{"suffix ignore case", `{"detail":{"file":[{"suffix":{"equals-ignore-case":".png"}}]}}`, true},
		{"equals-ignore-case", `{"detail":{"state":[{"equals-ignore-case":"PENDING"}]}}`, true},
		{"equals-ignore-case mismatch", `{"detail":{"state":[{"equals-ignore-case":"done"}]}}`, false},
		{"wildcard", `{"detail":{"file":[{"wildcard":"img/*.PNG"}]}}`, true},
		{"wildcard mismatch", `{"detail":{"file":[{"wildcard":"doc/*"}]}}`, false},
		{"anything-but value", `{"detail":{"state":[{"anything-but":"Done"}]}}`, true},
		{"anything-but value excluded", `{"detail":{"state":[{"anything-but":"Pending"}]}}`, false},
		{"anything-but list", `{"detail":{"state":[{"anything-but":["Done","Failed"]}]}}`, true},
		{"anything-but list excluded", `{"detail":{"state":[{"anything-but":["Done","Pending"]}]}}`, false},
		{"anything-but number", `{"detail":{"amount":[{"anything-but":[100,200]}]}}`, true},
		{"anything-but number excluded", `{"detail":{"amount":[{"anything-but":300}]}}`, false},
		{"anything-but missing field", `{"detail":{"nothing":[{"anything-but":"x"}]}}`, false},
		{"anything-but prefix", `{"detail":{"id":[{"anything-but":{"prefix":"INV-"}}]}}`, true},
		{"anything-but prefix excluded", `{"detail":{"id":[{"anything-but":{"prefix":"ORD-"}}]}}`, false},
		{"anything-but suffix excluded", `{"detail":{"file":[{"anything-but":{"suffix":".PNG"}}]}}`, false},
		{"anything-but ignore case excluded", `{"detail":{"state":[{"anything-but":{"equals-ignore-case":["pending"]}}]}}`, false},
		{"exists true", `{"detail":{"state":[{"exists":true}]}}`, true},
		{"exists true missing", `{"detail":{"nothing":[{"exists":true}]}}`, false},
		{"exists false missing", `{"detail":{"nothing":[{"exists":false}]}}`, true},
		{"exists false present", `{"detail":{"state":[{"exists":false}]}}`, false},
		{"exists false empty array", `{"detail":{"empty":[{"exists":false}]}}`, true},
		{"exists false under missing object", `{"detail":{"ghost":{"x":[{"exists":false}]}}}`, true},
		{"exists true on null", `{"detail":{"coupon":[{"exists":true}]}}`, true},
		{"numeric >", `{"detail":{"amount":[{"numeric":[">",100]}]}}`, true},
		{"numeric > fails", `{"detail":{"amount":[{"numeric":[">",300]}]}}`, false},
		{"numeric >=", `{"detail":{"amount":[{"numeric":[">=",300]}]}}`, true},
		{"numeric <", `{"detail":{"price":[{"numeric":["<",13]}]}}`, true},
		{"numeric <= fails", `{"detail":{"price":[{"numeric":["<=",12]}]}}`, false},
		{"numeric =", `{"detail":{"price":[{"numeric":["=",12.5]}]}}`, true},
		{"numeric range", `{"detail":{"amount":[{"numeric":[">",0,"<=",300]}]}}`, true},
		{"numeric range outside", `{"detail":{"amount":[{"numeric":[">",0,"<",300]}]}}`, false},
		{"numeric on string", `{"detail":{"id":[{"numeric":[">",0]}]}}`, false},
		{"numeric on array", `{"detail":{"items":{"qty":[{"numeric":[">",4]}]}}}`, true},
		{"cidr", `{"detail":{"ip":[{"cidr":"10.0.0.0/24"}]}}`, true},
		{"cidr outside", `{"detail":{"ip":[{"cidr":"10.0.1.0/24"}]}}`, false},
		{"or first", `{"$or":[{"source":["com.shop.orders"]},{"detail-type":["x"]}]}`, true},
		{"or second", `{"$or":[{"source":["x"]},{"detail":{"amount":[300]}}]}`, true},
		{"or none", `{"$or":[{"source":["x"]},{"detail-type":["y"]}]}`, false},
		{"or nested with sibling", `{"source":["com.shop.orders"],"detail":{"$or":[{"state":["Done"]},{"paid":[true]}]}}`, true},
		{"or nested sibling fails", `{"source":["x"],"detail":{"$or":[{"state":["Done"]},{"paid":[true]}]}}`, false},
		{"mixed alternatives", `{"detail":{"state":["Done",{"prefix":"Pen"}]}}`, true},
		{"empty pattern matches all", `{}`, true},
		{"empty list matches nothing", `{"source":[]}`, false},
		{"dynamodb filter", `{"detail":{"customer":{"tier":[{"prefix":"go"}]},"id":[{"prefix":"ORD-"}]}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(tt.pattern)
			if err != nil {
				t.Fatalf("Compile(%s): %v", tt.pattern, err)
			}
			if got := p.Matches([]byte(event)); got != tt.want {
				t.Fatalf("Matches(%s) = %v, want %v", tt.pattern, got, tt.want)
			}
		})
	}
}

func TestLambdaDynamoDBFilter(t *testing.T) {
	t.Parallel()
	p := MustCompile(`{"eventName":["INSERT"],"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}}}`)
	yes := `{"eventName":"INSERT","dynamodb":{"Keys":{"PK":{"S":"A"},"SK":{"S":"OUTBOX#1"}}}}`
	modify := `{"eventName":"MODIFY","dynamodb":{"Keys":{"PK":{"S":"A"},"SK":{"S":"OUTBOX#1"}}}}`
	other := `{"eventName":"INSERT","dynamodb":{"Keys":{"PK":{"S":"A"},"SK":{"S":"ORDER#1"}}}}`
	if !p.Matches([]byte(yes)) || p.Matches([]byte(modify)) || p.Matches([]byte(other)) {
		t.Fatal("DynamoDB stream filter matched wrongly")
	}
	if p.Matches([]byte(`not json`)) || p.Matches([]byte(`[1]`)) {
		t.Fatal("a malformed event matched")
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, pattern, reason string }{
		{"not json", `{"source":`, "not valid JSON"},
		{"not an object", `["a"]`, "Filter is not an object"},
		{"leaf not array", `{"source":"a"}`, "Match value must be"},
		{"unknown operator", `{"source":[{"regex":"a"}]}`, "Unrecognized match type regex"},
		{"two operators", `{"source":[{"prefix":"a","suffix":"b"}]}`, "Only one key"},
		{"prefix not string", `{"source":[{"prefix":1}]}`, "prefix match pattern must be a string"},
		{"exists not bool", `{"source":[{"exists":"yes"}]}`, "exists match pattern must be either true or false"},
		{"numeric bad op", `{"a":[{"numeric":["!=",1]}]}`, "Unrecognized numeric range operator"},
		{"numeric bad value", `{"a":[{"numeric":[">","1"]}]}`, "must be numeric"},
		{"numeric odd", `{"a":[{"numeric":[">"]}]}`, "Value of numeric"},
		{"numeric inverted", `{"a":[{"numeric":[">",5,"<",1]}]}`, "Bottom must be less than top"},
		{"numeric two lowers", `{"a":[{"numeric":[">",1,">",2]}]}`, "Bad numeric range"},
		{"anything-but null", `{"a":[{"anything-but":null}]}`, "null is not supported"},
		{"anything-but bad op", `{"a":[{"anything-but":{"numeric":[">",1]}}]}`, "Unsupported anything-but"},
		{"or one branch", `{"$or":[{"a":["b"]}]}`, "$or"},
		{"or not objects", `{"$or":["a","b"]}`, "$or"},
		{"cidr bad", `{"a":[{"cidr":"10.0.0.1"}]}`, "CIDR"},
		{"trailing content", `{"a":["b"]} {}`, "Unexpected content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tt.pattern)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Compile(%s) = %v, want *Error", tt.pattern, err)
			}
			if !strings.HasPrefix(err.Error(), "Event pattern is not valid. Reason: ") || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("Compile(%s) error %q, want reason containing %q", tt.pattern, err, tt.reason)
			}
		})
	}
}

func TestWildcard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p, s string
		want bool
	}{
		{"a*", "abc", true}, {"*c", "abc", true}, {"a*c", "abc", true}, {"a*c", "ac", true},
		{"a*a", "a", false}, {"*", "", true}, {"a*b*c", "aXbYc", true}, {"a*b*c", "aXcYb", false}, {"abc", "abd", false},
	}
	for _, tt := range tests {
		if got := wildcard(tt.p, tt.s); got != tt.want {
			t.Errorf("wildcard(%q, %q) = %v, want %v", tt.p, tt.s, got, tt.want)
		}
	}
}
