"""moto's condition parser, each parse kept by its expression, #names and :values.

moto parses a ConditionExpression (or a FilterExpression) at every request, twice for a PutItem (its handler to
check the placeholders, its backend to evaluate): over half of a conditional PutItem's cost. A parse reads nothing
but those three, and what it makes (moto's Op and Func trees) only reads the item it is given, so the same three
give the same tree: it is made once, from copies of the #names and :values, and shared. What fails to parse is not
kept, so it fails again as moto fails; nor is a parse whose :values are long (a kept parse holds them).
"""
import copy
from collections import OrderedDict

from moto.dynamodb import comparisons

CONDITIONS_KEPT = 1024
VALUES_KEPT_LENGTH = 1024  # a parse is kept only for :values of a repr this long or shorter
moto_parser = comparisons.ConditionExpressionParser
PARSED = OrderedDict()  # (expression, #names, repr of :values) -> (tree, #names found, :values found), oldest first


class KeptConditionParser(moto_parser):
    """ConditionExpressionParser whose parse is made once per expression, #names and :values."""

    def parse(self):
        """The parsed tree, as moto's parse returns it; the placeholders it found in expr_attr_*_found."""
        names, values = self.expression_attribute_names, self.expression_attribute_values
        try:
            kept = (self.condition_expression, None if names is None else tuple(names.items()), repr(values))
            found = PARSED.get(kept)
        except (TypeError, AttributeError):  # arguments that cannot key the cache: moto's parse answers
            return super().parse()
        if len(kept[2]) > VALUES_KEPT_LENGTH:  # a parse holding long values is not worth the memory it would keep
            return super().parse()
        if found is None:
            fresh = moto_parser(self.condition_expression, copy.deepcopy(names), copy.deepcopy(values))
            found = PARSED[kept] = (fresh.parse(), tuple(fresh.expr_attr_names_found),
                                    tuple(fresh.expr_attr_values_found))
            if len(PARSED) > CONDITIONS_KEPT:
                PARSED.popitem(last=False)
        else:
            PARSED.move_to_end(kept)
        tree, names_found, values_found = found
        self.expr_attr_names_found.extend(names_found)
        self.expr_attr_values_found.extend(values_found)
        return tree


comparisons.ConditionExpressionParser = KeptConditionParser
