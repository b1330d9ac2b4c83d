"""The table of outputs/arith/summary.md, from the sweeps make.sh wrote:
per op and dtype, the sizes swept, how many were confirmed by replay (in
plain additions or with an arithmetic model), the models found, and every
size that was not confirmed."""
import glob
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
rows = []
for path in sorted(glob.glob(os.path.join(here, "sweeps", "*.json"))):
    with open(path) as f:
        s = json.load(f)
    points = s["points"]
    bad = [p for p in points if p["order"] in ("not confirmed by replay", "broken")]
    modelled = {}
    for p in points:
        a = p.get("arithmetic")
        if a is None:
            continue
        def kind(node):
            words = [node["format"]]
            if node["rounding"] != "nearest-even":
                words.append(node["rounding"])
            if node.get("compensated"):
                words.append("compensated")
            if node.get("drops_error"):
                words.append("dropping its error")
            return " ".join(words)

        kinds = {kind(node) for node in a.get("nodes", [])}
        name = kind(a["default"])
        name += "".join(", nodes " + k for k in sorted(kinds))
        if a.get("inputs"):
            name += "; inputs rounded to " + a["inputs"]
        products = a.get("products")
        if products:
            others = sorted(set(products.get("leaves", {}).values()))
            name += "; products " + products["default"] + "".join(", some " + o for o in others)
        modelled.setdefault(name, []).append(p["n"])
    sizes = [p["n"] for p in points]
    span = "%d..%d" % (sizes[0], sizes[-1]) if len(sizes) > 20 else ",".join(map(str, sizes))
    models = "; ".join("%s at %d sizes" % (k, len(v)) for k, v in sorted(modelled.items()))
    rows.append(
        "| %s | %s | %s | %d | %d | %s | %s |"
        % (
            s["probe"],
            s["dtype"],
            span,
            len(points),
            len(points) - len(bad),
            models or "plain additions at every size",
            ", ".join("%d (%s)" % (p["n"], p["order"]) for p in bad) or "none",
        )
    )
print("Every size's revealed tree replayed on 200 random inputs and compared bit for bit "
      "(`fprev sweep SPEC -n SIZES --confirm 200`, outputs/arith/make.sh). Where plain "
      "additions in one format differ, the arithmetic model found for that size replays it. "
      "A black box that multiplies always has its model found, products included, and "
      "replayed on random x and y: \"products exact, some f32\" means most products reach "
      "their addition exactly (a fused multiply-add) and some are rounded to f32 first (an "
      "FMA loop's first product per accumulator, or a tail that multiplies in f32).\n")
print("| black box | dtype | n | sizes | confirmed | arithmetic beyond plain additions | not confirmed |")
print("|---|---|---|---|---|---|---|")
print("\n".join(rows))
