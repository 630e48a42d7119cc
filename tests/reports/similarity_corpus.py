"""A class for the similarity report: independent correct solutions in different styles, disguised copies,
untouched releases, a starter-only student and bad cells, written into an OUT folder as a grading run leaves it.

Who copied what (the only pairs the report may flag):
- nmt scaled_dot_attention: Zoë Ñúñez copied 李明 (names changed, comments and blank lines added);
  Bad Input copied 李明 too and broke the syntax on the way.
- nmt positional_encodings: Ömer Çelik copied Anna Lee (2) (names changed, independent lines reordered).
- nmt written_positional_encodings: Zoë Ñúñez copied 李明 (sentences reordered, a few words swapped).
Everyone else wrote their own; ridge_closed_form has one natural two-line answer that two students both wrote.
"""

import json
import re
from pathlib import Path

from autograder import contract, paths

EXPECTED_FLAGGED = {
    ("nmt", "scaled_dot_attention", "Zoë Ñúñez", "李明"),
    ("nmt", "scaled_dot_attention", "Bad Input", "李明"),
    ("nmt", "scaled_dot_attention", "Bad Input", "Zoë Ñúñez"),
    ("nmt", "positional_encodings", "Anna Lee (2)", "Ömer Çelik"),
    ("nmt", "written_positional_encodings", "Zoë Ñúñez", "李明"),
}
UNTOUCHED = ("untouched 1", "untouched 2", "O'Brien <dev>")  # the release as downloaded
STARTER_ONLY = "starter only"

# --- scaled_dot_attention: the body of forward (8 spaces) ---------------------------------------------

SDA = {
    "A": """\
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)
        q = self.Q(queries)
        k = self.K(keys)
        v = self.V(values)
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scaling_factor
        attention_weights = self.softmax(scores)
        context = torch.bmm(attention_weights, v)
        return context, attention_weights
""",
    "B": """\
        Q = self.Q(queries if queries.dim() == 3 else queries[:, None, :])
        K = self.K(keys)
        V = self.V(values)
        logits = torch.einsum("bkh,bth->bkt", Q, K)
        logits = logits * self.scaling_factor
        weights = self.softmax(logits)
        out = torch.einsum("bkt,bth->bkh", weights, V)
        return out, weights
""",
    "C": """\
        batch = queries.shape[0]
        if len(queries.shape) == 2:
            queries = queries.view(batch, 1, -1)
        projected_q = self.Q(queries)
        projected_k = self.K(keys).permute(0, 2, 1)
        raw = projected_q @ projected_k
        probs = torch.softmax(raw / math.sqrt(self.hidden_size), dim=2)
        ctx = probs @ self.V(values)
        return ctx, probs
""",
    "D": """\
        q = queries.unsqueeze(1) if queries.ndim == 2 else queries
        scores = torch.matmul(self.Q(q), self.K(keys).transpose(-2, -1))
        scores = scores * self.scaling_factor
        attn = scores.softmax(dim=-1)
        values_proj = self.V(values)
        result = torch.matmul(attn, values_proj)
        return result, attn
""",
    # A with its names changed, comments and blank lines added
    "A renamed": """\
        # a single query becomes a batch of one query

        if queries.dim() == 2:
            queries = queries.unsqueeze(1)  # (B, 1, H)

        query_proj = self.Q(queries)   # project the queries
        key_proj = self.K(keys)

        value_proj = self.V(values)
        # similarity of every query with every key, scaled
        s = torch.bmm(query_proj, key_proj.transpose(1, 2)) * self.scaling_factor

        w = self.softmax(s)  # normalise over the keys
        out = torch.bmm(w, value_proj)
        return out, w
""",
    # A copied with a bracket lost on the way: does not parse
    "A broken": """\
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)
        q = self.Q(queries)
        k = self.K(keys)
        v = self.V(values
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scaling_factor
        attention_weights = self.softmax(scores)
        context = torch.bmm(attention_weights, v)
        return context, attention_weights
""",
}

# --- positional_encodings: the body (4 spaces) ---------------------------------------------------------

PE = {
    "A": """\
    positions = torch.arange(max_seq_len, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, hidden_size, 2, dtype=torch.float32)[None, :]
    angles = positions / 10000 ** (two_i / hidden_size)
    pos_encodings = torch.zeros(max_seq_len, hidden_size)
    pos_encodings[:, 0::2] = torch.sin(angles)
    pos_encodings[:, 1::2] = torch.cos(angles[:, : hidden_size // 2])
    return pos_encodings
""",
    "B": """\
    pe = torch.zeros(max_seq_len, hidden_size, dtype=torch.float32)
    for pos in range(max_seq_len):
        for i in range(hidden_size):
            exponent = (i - i % 2) / hidden_size
            angle = pos / (10000 ** exponent)
            if i % 2 == 0:
                pe[pos, i] = math.sin(angle)
            else:
                pe[pos, i] = math.cos(angle)
    return pe
""",
    "C": """\
    pos = np.arange(max_seq_len).reshape(-1, 1)
    dims = np.arange(hidden_size).reshape(1, -1)
    rates = 1.0 / np.power(10000.0, (2 * (dims // 2)) / hidden_size)
    table = pos * rates
    table[:, 0::2] = np.sin(table[:, 0::2])
    table[:, 1::2] = np.cos(table[:, 1::2])
    return torch.tensor(table, dtype=torch.float32)
""",
    "D": """\
    result = torch.zeros(max_seq_len, hidden_size)
    position = torch.arange(0, max_seq_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, hidden_size, 2).float() * (-math.log(10000.0) / hidden_size))
    result[:, 0::2] = torch.sin(position * div_term)
    if hidden_size % 2 == 1:
        result[:, 1::2] = torch.cos(position * div_term[:-1])
    else:
        result[:, 1::2] = torch.cos(position * div_term)
    return result
""",
    "E": """\
    idx = torch.arange(hidden_size)
    freq = torch.pow(torch.tensor(10000.0), -(idx - idx % 2).float() / hidden_size)
    t = torch.arange(max_seq_len).float().unsqueeze(-1) * freq
    return torch.where(idx % 2 == 0, torch.sin(t), torch.cos(t)).float()
""",
    # D with its names changed and the independent lines (position, table) reordered
    "D reordered": """\
    pos_col = torch.arange(0, max_seq_len).unsqueeze(1).float()
    # frequencies of the even dimensions
    freqs = torch.exp(torch.arange(0, hidden_size, 2).float() * (-math.log(10000.0) / hidden_size))
    enc = torch.zeros(max_seq_len, hidden_size)

    enc[:, 0::2] = torch.sin(pos_col * freqs)
    if hidden_size % 2 == 1:  # odd size: one cos column fewer
        enc[:, 1::2] = torch.cos(pos_col * freqs[:-1])
    else:
        enc[:, 1::2] = torch.cos(pos_col * freqs)
    return enc
""",
}

# --- theory: nqm_expected_loss and ridge_closed_form (4 spaces) ----------------------------------------

NQM = {
    "A": """\
    second = float(w0) ** 2
    for _ in range(int(steps)):
        second = (1 - lr * a) ** 2 * second + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * second
""",
    "B": """\
    r = (1 - lr * a) ** 2
    noise = lr ** 2 * sigma ** 2 / batch_size
    if r == 1:
        second = w0 ** 2 + steps * noise
    else:
        second = r ** steps * w0 ** 2 + noise * (1 - r ** steps) / (1 - r)
    return float(0.5 * a * second)
""",
    "C": """\
    ew2 = [w0 * w0]
    for step in range(steps):
        prev = ew2[-1]
        ew2.append(prev * (1 - lr * a) * (1 - lr * a) + (lr * lr) * (sigma * sigma) / batch_size)
    loss = a * ew2[-1] / 2
    return float(loss)
""",
    "D": """\
    mean_sq = w0 ** 2
    shrink = 1.0 - lr * a
    step_noise = (lr * sigma) ** 2 / batch_size
    k = 0
    while k < steps:
        mean_sq = shrink * shrink * mean_sq + step_noise
        k += 1
    return a * mean_sq / 2.0
""",
}
RIDGE = """\
    n, d = X.shape
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(d), X.T @ t)
"""

# --- written_positional_encodings --------------------------------------------------------------------

WRITTEN = {
    "W1": (
        "Without positional encodings the encoder is permutation invariant: stop, tops and post contain the "
        "same letters, so every character gets the same representation in all three words and the model cannot "
        "tell them apart. Pig Latin moves the first consonant cluster to the end, so the output depends on which "
        "letter comes first. Sinusoids stay bounded for any position while a raw index grows without limit and "
        "swamps the embedding. They also let the model express relative offsets as a linear function of the "
        "encoding and extend to lengths never seen in training, which a one-hot vector cannot."
    ),
    "W2": (
        "(a) Attention alone treats its input as a set. The three words are anagrams, so each letter would "
        "receive an identical vector regardless of where it sits, and the encoder output would be identical up "
        "to reordering. Pig Latin needs to know which letters start the word.\n\n(b) Adding the raw index gives "
        "huge values for later positions that dominate the character embedding, and a one-hot position needs as "
        "many dimensions as the longest word and says nothing about neighbouring positions. Sine and cosine "
        "waves keep every value between -1 and 1 and make nearby positions look alike."
    ),
    "W3": (
        "**(a)** The encoder would output the same multiset of vectors for stop, tops and post, because nothing "
        "in self-attention depends on order; the translation of each word needs the first consonants, so it "
        "would be impossible. **(b)** 1. An integer position is unbounded and on a different scale from the "
        "learned embeddings, which makes training unstable. 2. A one-hot code cannot generalise to a position "
        "it has never seen, whereas the sinusoid of a new position is still meaningful, and shifts by k are a "
        "fixed rotation of the sin/cos pairs."
    ),
    "W4": (
        "Here is my answer to the question (positional encodings). What would an encoder without positional "
        "encodings compute for the words stop, tops and post? It sees a bag of characters, so the three "
        "encodings coincide and Pig Latin, which depends on the opening consonants, cannot be produced. "
        "Sinusoids beat a raw index since their values do not explode for long inputs, and unlike one-hot "
        "vectors they share structure between neighbouring positions so that relative distance is easy to read."
    ),
    # W1 with its sentences reordered and a few words swapped
    "W1 reordered": (
        "Pig Latin moves the first consonant cluster to the end, so the result depends on which letter comes "
        "first. Without positional encodings the encoder is permutation invariant: stop, tops and post contain "
        "the same characters, so every character gets the same representation in all three words and the "
        "network cannot tell them apart. They also let the model express relative offsets as a linear function "
        "of the encoding and extend to lengths never seen during training, which a one-hot vector cannot. "
        "Sinusoids stay bounded for any position while a raw index grows without bound and swamps the embedding."
    ),
}

# student -> {(notebook, grade id): what they wrote}; a cell not named stays as released
CLASS = {
    "李明": {
        ("nmt", "scaled_dot_attention"): SDA["A"],
        ("nmt", "positional_encodings"): PE["A"],
        ("nmt", "written_positional_encodings"): WRITTEN["W1"],
        ("theory", "nqm_expected_loss"): NQM["A"],
        ("theory", "ridge_closed_form"): RIDGE,
    },
    "Zoë Ñúñez": {
        ("nmt", "scaled_dot_attention"): SDA["A renamed"],
        ("nmt", "positional_encodings"): PE["B"],
        ("nmt", "written_positional_encodings"): WRITTEN["W1 reordered"],
        ("theory", "nqm_expected_loss"): NQM["B"],
    },
    "Anna Lee": {
        ("nmt", "scaled_dot_attention"): SDA["B"],
        ("nmt", "positional_encodings"): PE["C"],
        ("nmt", "written_positional_encodings"): WRITTEN["W2"],
        ("theory", "nqm_expected_loss"): NQM["C"],
        ("theory", "ridge_closed_form"): RIDGE,
    },
    "Anna Lee (2)": {
        ("nmt", "scaled_dot_attention"): SDA["C"],
        ("nmt", "positional_encodings"): PE["D"],
        ("nmt", "written_positional_encodings"): WRITTEN["W3"],
        ("theory", "nqm_expected_loss"): NQM["D"],
    },
    "Ömer Çelik": {
        ("nmt", "scaled_dot_attention"): SDA["D"],
        ("nmt", "positional_encodings"): PE["D reordered"],
        ("nmt", "written_positional_encodings"): WRITTEN["W4"],
    },
    "Bad Input": {
        ("nmt", "scaled_dot_attention"): SDA["A broken"],
        ("nmt", "positional_encodings"): "\x00\x01\x02 PK\x03\x04 binary junk \x00\xff\xfe" * 50,
        ("nmt", "written_positional_encodings"): "lorem ipsum dolor " * 600_000,  # over 10 MB
        ("theory", "nqm_expected_loss"): PE["E"],  # a whole other function pasted into the cell
    },
}

# a cell of their own that 李明 and Zoë Ñúñez both have, with the same id and the same output (one notebook file)
SHARED_CELL = {
    "cell_type": "code",
    "id": "f00dcafe",
    "metadata": {},
    "execution_count": 7,
    "source": "print(losses[-3:])",
    "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "[0.4182736, 0.4113092, 0.4097781] (epoch 48-50)\n"}
    ],
}
SHARED_BY = ("李明", "Zoë Ñúñez")

_STUB = re.compile(r"^[ \t]*# YOUR CODE HERE\n[ \t]*raise NotImplementedError\(.*\)\n?", re.M)


def fill(released: str, body: str) -> str:
    """A solution cell as a student leaves it: the released cell with its stub lines replaced by `body`."""
    if not _STUB.search(released):
        return body  # a written answer: the body is the whole cell
    return _STUB.sub(lambda _: body, released, count=1)


def starter_only(released: str) -> str:
    """What a student who only kept the starter code submits: the stub's raise line removed."""
    return re.sub(r"^[ \t]*raise NotImplementedError\(.*\)\n?", "", released, flags=re.M)


def _nb(name: str) -> dict:
    return json.loads((paths.RELEASE / f"{name}.ipynb").read_text())


def write_class(out: Path, notebooks=("nmt", "theory"), students=None) -> Path:
    """OUT with autograded/<student>/a3/<nb>.ipynb for the whole class (and the release in the template cache)."""
    out = Path(out)
    rel_dir = out / ".cache" / "template" / "release"
    rel_dir.mkdir(parents=True, exist_ok=True)
    for name in notebooks:
        (rel_dir / f"{name}.ipynb").write_text(json.dumps(_nb(name)))
    everyone = dict(CLASS, **{s: {} for s in UNTOUCHED}, **{STARTER_ONLY: "starter"})
    for student, cells in everyone.items() if students is None else ((s, everyone[s]) for s in students):
        for name in notebooks:
            nb = _nb(name)
            for cell in nb["cells"]:
                gid = contract.nbgrader_meta(cell).get("grade_id")
                if not contract.is_solution_cell(cell):
                    continue
                released = "".join(cell["source"])
                if cells == "starter":
                    cell["source"] = starter_only(released)
                elif (name, gid) in cells:
                    cell["source"] = fill(released, cells[name, gid])
            if name == "nmt" and student in SHARED_BY:
                nb["cells"].append(SHARED_CELL)
            path = out / "autograded" / student / contract.ASSIGNMENT / f"{name}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(nb, ensure_ascii=False))
    return out
