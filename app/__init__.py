"""attnscope: a web visualiser for attention weights."""
