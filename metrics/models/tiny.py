"""Tiny Korean models with random weights, built offline from Korean text.

Tests, doctests and the offline demo need models without the Hub. These builders train a cased WordPiece
vocabulary (BERT) or a byte-level BPE vocabulary (GPT-2) with ``tokenizers`` on the given sentences, wrap
them in ``transformers`` fast tokenizers and save a randomly initialised model beside them. Everything is
seeded: the same texts and options give the same files.

Cased matters: an uncased BERT tokenizer NFD-normalises and strips accents, which splits Hangul into jamo.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["build_tiny_bert", "build_tiny_gpt2", "build_tiny_llama", "BERT_BASE_DIMS", "GPT2_SMALL_DIMS",
           "TINY_BERT_DIMS", "TINY_GPT2_DIMS", "TINY_LLAMA_DIMS"]

#: Dimensions of the tiny models used by the tests (fast on a CPU, still 12 layers deep for layer tools).
TINY_BERT_DIMS = dict(hidden_size=64, num_hidden_layers=12, num_attention_heads=4, intermediate_size=128,
                      max_position_embeddings=128)
TINY_GPT2_DIMS = dict(n_embd=64, n_layer=2, n_head=4, n_positions=128)
TINY_LLAMA_DIMS = dict(hidden_size=64, num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2,
                       intermediate_size=128, max_position_embeddings=128)
#: Realistic sizes for benchmarks (random weights are fine for timing).
BERT_BASE_DIMS = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                      max_position_embeddings=512)
GPT2_SMALL_DIMS = dict(n_embd=768, n_layer=12, n_head=12, n_positions=1024)


def _done(out: Path) -> bool:
    return (out / "config.json").is_file() and (out / "tokenizer.json").is_file()


def _wordpiece(texts: Iterable[str], vocab_size: int, max_length: int):
    """A cased WordPiece fast tokenizer ([CLS] text [SEP]) trained on ``texts``."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    wp = BertWordPieceTokenizer(lowercase=False, strip_accents=False, clean_text=True,
                                handle_chinese_chars=True)
    wp.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=2,
                           special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    return BertTokenizerFast(tokenizer_object=wp._tokenizer, do_lower_case=False, strip_accents=False,
                             unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]",
                             mask_token="[MASK]", model_max_length=max_length)


def build_tiny_bert(out_dir: str | os.PathLike, texts: Iterable[str], *, vocab_size: int = 4000,
                    seed: int = 0, overwrite: bool = False, **dims) -> str:
    """Save a cased WordPiece tokenizer and a random ``BertForMaskedLM`` to ``out_dir``; return its path.

    The checkpoint loads with ``AutoModel`` (encoder, for BERTScore), ``AutoModelForMaskedLM`` (pseudo-
    perplexity, MERE) and ``AutoModelForSequenceClassification`` (Trainer tests). ``dims`` override
    :data:`TINY_BERT_DIMS` (e.g. ``**BERT_BASE_DIMS`` for benchmarks).
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM

    out = Path(out_dir)
    if _done(out) and not overwrite:
        return str(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg_dims = {**TINY_BERT_DIMS, **dims}
    tok = _wordpiece(texts, vocab_size, cfg_dims["max_position_embeddings"])
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tok.backend_tokenizer.get_vocab_size(), **cfg_dims)
    model = BertForMaskedLM(config).eval()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


def build_tiny_gpt2(out_dir: str | os.PathLike, texts: Iterable[str], *, vocab_size: int = 2000,
                    seed: int = 0, overwrite: bool = False, **dims) -> str:
    """Save a byte-level BPE tokenizer (no pad token, like GPT-2's) and a random ``GPT2LMHeadModel``."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    out = Path(out_dir)
    if _done(out) and not overwrite:
        return str(out)
    out.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer(add_prefix_space=False)
    bpe.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=2,
                            special_tokens=["<|endoftext|>"])
    cfg_dims = {**TINY_GPT2_DIMS, **dims}
    tok = GPT2TokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<|endoftext|>",
                            eos_token="<|endoftext|>", unk_token="<|endoftext|>",
                            model_max_length=cfg_dims["n_positions"])
    eos = tok.convert_tokens_to_ids("<|endoftext|>")
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=tok.backend_tokenizer.get_vocab_size(), bos_token_id=eos,
                        eos_token_id=eos, **cfg_dims)
    model = GPT2LMHeadModel(config).eval()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


def build_tiny_llama(out_dir: str | os.PathLike, texts: Iterable[str], *, vocab_size: int = 4000,
                     seed: int = 0, overwrite: bool = False, **dims) -> str:
    """Save the cased WordPiece tokenizer of :func:`build_tiny_bert` and a random ``LlamaForCausalLM`` (6 blocks,
    a final RMSNorm) to ``out_dir``; return its path.

    A decoder with a final norm that bert_score 0.3.13 also runs (it cuts ``layers`` and takes the output), for
    the layer-semantics tests. The RMSNorm weights are drawn from U(0.5, 1.5) instead of all ones, so the final
    norm changes cosine similarities as a trained one does. ``dims`` override :data:`TINY_LLAMA_DIMS`.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out = Path(out_dir)
    if _done(out) and not overwrite:
        return str(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg_dims = {**TINY_LLAMA_DIMS, **dims}
    tok = _wordpiece(texts, vocab_size, cfg_dims["max_position_embeddings"])
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=tok.backend_tokenizer.get_vocab_size(), pad_token_id=tok.pad_token_id,
                         bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id, **cfg_dims)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.uniform_(0.5, 1.5)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)
