package dynamodb

import (
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/interpreter"
	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/interpreter/language"
	mtypes "github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// condition is a parsed condition or filter expression, evaluated with the
// engine's expression language but with DynamoDB's rule for operands of
// different types: a comparison of, say, a number with a string is false
// (<> is true) and a BETWEEN whose operand's type differs from its bounds'
// is false. The engine raises an error for both, which it reports as a
// ValidationException.
type condition struct {
	label string
	expr  *language.ConditionalExpression
	names map[string]string
}

func parseCondition(label, expr string, names map[string]string) (*condition, error) {
	p := language.NewParser(language.NewLexer(expr))
	c := p.ParseConditionalExpression()
	if errs := p.Errors(); len(errs) > 0 {
		return nil, awsapi.ValidationException("Invalid %s: Syntax error; %s", label, strings.Join(errs, "; "))
	}
	if c == nil || c.Expression == nil {
		return nil, awsapi.ValidationException("Invalid %s: The expression can not be empty;", label)
	}
	if err := interpreter.ValidateExpressionAttributeNamesDeclared(label, expr, names); err != nil {
		return nil, awsapi.ValidationException("%s", err.Error())
	}
	return &condition{label: label, expr: c, names: names}, nil
}

// match evaluates the condition on item (nil when absent) with the
// expression attribute values.
func (c *condition) match(item, values Item) (bool, error) {
	env := language.NewEnvironment()
	env.Aliases = map[string]string{}
	maps.Copy(env.Aliases, c.names)
	for _, m := range []Item{item, values} {
		var attrs map[string]*mtypes.Item
		if err := convert(m, &attrs); err != nil {
			return false, err
		}
		if err := env.AddAttributes(attrs); err != nil {
			return false, awsapi.ValidationException("Invalid %s: %v", c.label, err)
		}
	}
	res := evalCondition(c.expr.Expression, env)
	if res.Type() == language.ObjectTypeError {
		return false, awsapi.ValidationException("Invalid %s: %s", c.label, res.Inspect())
	}
	if res.Type() != language.ObjectTypeBoolean {
		return false, awsapi.ValidationException("Invalid %s: a condition must evaluate to a BOOL, %q evaluates to %q", c.label, c.expr.Expression.String(), res.Type())
	}
	return res == language.TRUE, nil
}

func isComparison(op string) bool {
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// defined reports whether o is a value (not an error or a missing
// attribute).
func defined(o language.Object) bool {
	return o.Type() != language.ObjectTypeError && !language.IsUndefinedObject(o)
}

func evalCondition(n language.Expression, env *language.Environment) language.Object {
	switch x := n.(type) {
	case *language.InfixExpression:
		op := strings.ToUpper(x.Operator)
		_, leftID := x.Left.(*language.Identifier)
		_, rightID := x.Right.(*language.Identifier)
		switch {
		case (op == "AND" || op == "OR") && !leftID && !rightID:
			l := evalCondition(x.Left, env)
			if l.Type() != language.ObjectTypeBoolean {
				return language.Eval(n, env)
			}
			r := evalCondition(x.Right, env)
			if r.Type() != language.ObjectTypeBoolean {
				return language.Eval(n, env)
			}
			if op == "AND" {
				return boolean(l == language.TRUE && r == language.TRUE)
			}
			return boolean(l == language.TRUE || r == language.TRUE)
		case isComparison(op):
			l, r := language.Eval(x.Left, env), language.Eval(x.Right, env)
			if defined(l) && defined(r) && l.Type() != r.Type() {
				return boolean(op == "<>")
			}
		}
	case *language.PrefixExpression:
		if _, id := x.Right.(*language.Identifier); !id && strings.EqualFold(x.Operator, "NOT") {
			r := evalCondition(x.Right, env)
			if r.Type() == language.ObjectTypeBoolean {
				return boolean(r != language.TRUE)
			}
		}
	case *language.BetweenExpression:
		v, lo, hi := language.Eval(x.Left, env), language.Eval(x.Range[0], env), language.Eval(x.Range[1], env)
		if defined(v) && defined(lo) && defined(hi) && lo.Type() == hi.Type() && v.Type() != lo.Type() {
			return language.FALSE
		}
	}
	return language.Eval(n, env)
}

func boolean(b bool) language.Object {
	if b {
		return language.TRUE
	}
	return language.FALSE
}

// projectItem applies a ProjectionExpression to an item.
func projectItem(expr string, names map[string]string, item wireItem) (wireItem, error) {
	var attrs map[string]*mtypes.Item
	if err := convert(item, &attrs); err != nil {
		return nil, err
	}
	li := &interpreter.Language{}
	out, err := li.Project(interpreter.ProjectInput{Expression: expr, Item: attrs, Aliases: names})
	if err != nil {
		return nil, awsapi.ValidationException("%s", err.Error())
	}
	var projected wireItem
	if err := convert(out, &projected); err != nil {
		return nil, err
	}
	return projected, nil
}

// mismatchErrors are the engine's messages for comparisons of operands of
// different types.
var mismatchErrors = []string{"operand is not a", "type mismatch", "mismatch type", "comparing types are not supported"}

// retryCondition handles an engine error of a conditional write that the
// engine raised comparing operands of different types (see condition): the
// condition is evaluated here on the stored item old; when it is false the
// write fails its condition, and when it holds the write runs again
// without it, with the expression attribute names and values that the
// expression keep (the update expression) still uses. Any other error is
// returned as is.
func retryCondition(err error, cond *string, names map[string]string, values wireItem, old Item, keep string,
	run func(cond *string, names map[string]string, values wireItem) error) error {
	if err == nil || cond == nil || *cond == "" || !slices.ContainsFunc(mismatchErrors, func(m string) bool { return strings.Contains(err.Error(), m) }) {
		return err
	}
	c, perr := parseCondition("ConditionExpression", *cond, names)
	if perr != nil {
		return err
	}
	holds, merr := c.match(old, fromWireItem(values))
	if merr != nil {
		return err
	}
	if !holds {
		return &ddbtypes.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	return run(nil, used(names, keep), used(values, keep))
}
