"""``{% fragment "name" value ... %}...{% endfragment %}``: a part of a page rendered once per
distinct input and then reused, for the parts of the annotate page that are the same from item
to item (issue 15: the web form path, where the annotate page's templates are most of the
server's work; the fragments save about 8% of its CPU per annotation, ``docs/benchmarks.md``).

The key is a digest of the fragment's name, the active language and the given values as JSON
(lazy translations as their text), so a fragment is reused only for equal inputs: whatever the
block reads must be among the values (or be the language). A block that reads anything else,
the CSRF token or the user for example, must not be a fragment. Kept per process, the most
recently used :data:`MAX_FRAGMENTS`; nothing to invalidate, since other inputs are other keys."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

from django import template
from django.template.base import FilterExpression, NodeList, Parser, Token
from django.template.context import Context
from django.utils import translation
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

#: fragments kept per process (a few per rubric version and language; each a few kB)
MAX_FRAGMENTS = 512

_rendered: OrderedDict[str, SafeString] = OrderedDict()
_lock = threading.Lock()


def fragment_key(name: str, values: list[Any]) -> str:
    """The digest a fragment is kept under: its name, the active language and its inputs."""
    inputs = json.dumps([name, translation.get_language(), values], default=str, sort_keys=True)
    return hashlib.sha256(inputs.encode()).hexdigest()


def clear() -> None:
    with _lock:
        _rendered.clear()


class FragmentNode(template.Node):
    def __init__(self, name: FilterExpression, values: list[FilterExpression], nodelist: NodeList) -> None:
        self.name, self.values, self.nodelist = name, values, nodelist

    def render(self, context: Context) -> str:
        key = fragment_key(str(self.name.resolve(context)), [v.resolve(context) for v in self.values])
        with _lock:
            html = _rendered.get(key)
            if html is not None:
                _rendered.move_to_end(key)
                return html
        html = mark_safe(self.nodelist.render(context))
        with _lock:
            _rendered[key] = html
            while len(_rendered) > MAX_FRAGMENTS:
                _rendered.popitem(last=False)
        return html


@register.tag("fragment")
def do_fragment(parser: Parser, token: Token) -> FragmentNode:
    bits = token.split_contents()
    if len(bits) < 2:
        raise template.TemplateSyntaxError("{% fragment %} needs a name, then the values the block reads")
    nodelist = parser.parse(("endfragment",))
    parser.delete_first_token()
    return FragmentNode(parser.compile_filter(bits[1]), [parser.compile_filter(b) for b in bits[2:]], nodelist)
