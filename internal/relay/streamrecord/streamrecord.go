// Package streamrecord converts the images of DynamoDB stream records, as
// aws-lambda-go decodes them, into AWS SDK attribute values, so that
// outbox.Table.ParseItem reads a stream image exactly as it reads an item
// returned by GetItem or Query.
package streamrecord

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Image converts a stream image (NewImage, OldImage or Keys). A nil image
// gives a nil item.
func Image(image map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	if image == nil {
		return nil, nil
	}
	item := make(map[string]types.AttributeValue, len(image))
	for name, v := range image {
		av, err := AttributeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		item[name] = av
	}
	return item, nil
}

// AttributeValue converts one attribute value, recursively for lists and maps.
func AttributeValue(v events.DynamoDBAttributeValue) (av types.AttributeValue, err error) {
	// The accessors of events.DynamoDBAttributeValue panic on a value that was
	// not decoded from JSON (the zero value); report it instead.
	defer func() {
		if p := recover(); p != nil {
			av, err = nil, fmt.Errorf("invalid attribute value: %v", p)
		}
	}()
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		list := v.List()
		out := make([]types.AttributeValue, len(list))
		for i, e := range list {
			av, err := AttributeValue(e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = av
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case events.DataTypeMap:
		m, err := Image(v.Map())
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]types.AttributeValue{}
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	default:
		return nil, fmt.Errorf("unsupported DynamoDB data type %d", v.DataType())
	}
}

// String returns the string value of a key attribute in image, and whether
// it is there and a string.
func String(image map[string]events.DynamoDBAttributeValue, name string) (string, bool) {
	v, ok := image[name]
	if !ok || v.DataType() != events.DataTypeString {
		return "", false
	}
	return v.String(), true
}
