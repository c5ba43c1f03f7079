"""The seed documents' own code, copied once, for the tests that re-run it as an oracle.

Each block names its seed file in /work/shared/seeds/ and is the seed's text with its
indentation restored (seed 000's page lost it) and its prints dropped. Every other change is
marked ``# added`` on its line and listed in the block's docstring. Tests import from here
(``from seed_code import ...``): pytest's default prepend import mode puts tests/ (the first
folder without an __init__.py above tests/attention, tests/inputs, ...) on sys.path.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

# --- seed 000 (000_fb1efa038902de4d.txt): Li Hongyi's SelfAttention ----------------------


class SelfAttention000(nn.Module):
    """Seed 000's ``SelfAttention`` (renamed here only because seed 002 has one too).

    Deviations, both marked: the forward also keeps α as ``self.atten`` (it still returns
    ``output`` only, as the seed does); the seed's ``super(SelfAttention, self)`` names this
    class. The seed's α is softmax(QKᵀ)·(1/√n): rows sum to 1/√input_num, not 1.
    """

    def __init__(self, input_vector_dim: int, input_num:int, output_vector_dim=None):
        """
        初始化SelfAttention,包含如下关键参数:
        input_vector_dim: 输入向量的维度,对应上述公式中的d,例如你将单词编码为了10维的向量,
            则该值为10
        input_num: 输入向量的数量,对应公式中的n,例如,你一句话包含20个单词,则该值为20
        output_vector_dim: 输出向量的维度,对应公式中的u,即b的维度,例如,经过Attention后的
            输出向量b,如果你想让他的维度为15,则该值为15,若不填,则取input_vector_dim
        """
        super(SelfAttention000,self).__init__()  # noqa: UP008 (added: the class's name here)
        self.input_vector_dim = input_vector_dim
        self.input_num = input_num
        self.output_vector_dim = output_vector_dim
        if not self.output_vector_dim:
            self.output_vector_dim = input_vector_dim
        """
        实际写代码时,常用线性层来表示需要训练的矩阵,方便反向传播和参数更新
        W的维度为 input_vector_dim x output_vector_dim
        """
        self.W_q = nn.Linear(input_vector_dim, output_vector_dim, bias=False)
        self.W_k = nn.Linear(input_vector_dim, output_vector_dim, bias=False)
        self.W_v = nn.Linear(input_vector_dim, output_vector_dim, bias=False)
        # 这个是根号下d_k
        self._norm_fact = 1 / np.sqrt(input_num)

    def forward(self, x):
        """
        进行前向传播:
        x: 输入向量,size为(batch_size, input_num, input_vector_dim)
        """
        batch_size = x.size(0)  # noqa: F841 (the seed's unused line)
        # 通过W_q, W_k, W_v矩阵计算出,Q,K,V
        # Q,K,V矩阵的size为 (batch_size, input_num, output_vector_dim)
        Q = self.W_q(x)
        K = self.W_k(x)
        V = self.W_v(x)
        # permute用于变换矩阵的size中对应元素的位置,
        # 即,将K的size由(batch_size, input_num, output_vector_dim),
        # 变为(batch_size, output_vector_dim,input_num)
        # 0,1,2 代表各个元素的下标,即变换前,batch_size所在的位置是0,input_num所在的位置是1
        K_T = K.permute(0,2,1)
        # bmm是batch matrix-matrix product,即对一批矩阵进行矩阵相乘
        # bmm详情参见:https://pytorch.org/docs/stable/generated/torch.bmm.html
        atten = nn.Softmax(dim=-1)(torch.bmm(Q,K_T)) * self._norm_fact
        self.atten = atten  # added (not in the seed): keep α for the tests
        # 最后再乘以 V
        output = torch.bmm(atten, V)
        return output


# --- seed 002 (002_6b7b994c4e333a15.txt): multi-head SelfAttention with shared layers ----


class SelfAttention002(nn.Module):
    """Seed 002's ``SelfAttention``, forward exactly as written: it declares three
    head_dim × head_dim linear layers but never applies them.

    Deviations, both marked: the forward also keeps α as ``self.attention`` (it still
    returns ``out`` only); the seed's ``super(SelfAttention, self)`` names this class.
    """

    def __init__(self, embed_size, heads):
        super(SelfAttention002, self).__init__()  # noqa: UP008 (added: the class's name here)
        self.embed_size = embed_size
        self.heads = heads
        self.head_dim = embed_size // heads

        # 线性变换矩阵
        self.values = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.keys = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.queries = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.fc_out = nn.Linear(heads * self.head_dim, embed_size)

    def forward(self, values, keys, query, mask):
        # 输入形状: (N, seq_len, embed_size)
        N = query.shape[0]
        value_len, key_len, query_len = values.shape[1], keys.shape[1], query.shape[1]

        # 分割为多头
        values = values.reshape(N, value_len, self.heads, self.head_dim)
        keys = keys.reshape(N, key_len, self.heads, self.head_dim)
        queries = query.reshape(N, query_len, self.heads, self.head_dim)

        # 计算注意力分数
        energy = torch.einsum("nqhd,nkhd->nhqk", [queries, keys])
        if mask is not None:
            energy = energy.masked_fill(mask == 0, float("-1e20"))

        # 缩放点积并计算注意力权重
        attention = torch.softmax(energy / (self.embed_size ** (1/2)), dim=3)
        self.attention = attention  # added (not in the seed): keep α for the tests

        # 应用注意力权重
        out = torch.einsum("nhql,nlhd->nqhd", [attention, values])
        out = out.reshape(N, query_len, self.heads * self.head_dim)

        # 最终线性变换
        out = self.fc_out(out)
        return out


class SelfAttention002Intended(SelfAttention002):
    """Seed 002's class with its three linear layers applied where they evidently belong:
    right after the split into heads, each [head_dim] piece through the same layer.

    Not seed text (added). It runs the seed's own forward unchanged on inputs whose head
    pieces already went through the layers: reshape → layer → reshape back, which the seed's
    forward then splits into exactly the same pieces.
    """

    def forward(self, values, keys, query, mask):
        return super().forward(self._per_head(self.values, values),
                               self._per_head(self.keys, keys),
                               self._per_head(self.queries, query), mask)

    def _per_head(self, layer: nn.Linear, x: torch.Tensor) -> torch.Tensor:
        """[N, L, heads·head_dim] → each [head_dim] piece through `layer` → same shape."""
        N, L = x.shape[:2]
        return layer(x.reshape(N, L, self.heads, self.head_dim)).reshape(x.shape)


# --- seed 004 (004_cf309d714bbd4bb2.txt) §3.3: the 3 × 4 self-attention worked example ----


def seed004_worked_example(dtype=torch.float32) -> dict[str, torch.Tensor]:
    """Seed 004 §3.3's script without its prints, as a function.

    Deviations (added): ``dtype`` is a parameter (the seed's is torch.float32, the default);
    the seed's tensors are returned by the seed's variable names (spelling included).
    """
    # 准备输入
    datas = [[1,0,1,1],[0,2,0,2],[1,1,1,1]]
    inputs = torch.tensor(datas, dtype=dtype)

    # 初始化参数
    key_weights = [[0, 0, 1],[1, 1, 0],[0, 1, 0],[1, 1, 0]]
    query_weights = [[1, 0, 1],[1, 0, 0],[0, 0, 1],[0, 1, 1]]
    value_weights = [[0, 2, 0],[0, 3, 0],[1, 0, 3],[1, 1, 0]]
    key_weights = torch.tensor(key_weights, dtype=dtype)
    query_weights = torch.tensor(query_weights, dtype=dtype)
    value_weights = torch.tensor(value_weights, dtype=dtype)

    # 获取key、value、query
    keys = inputs @ key_weights
    querys = inputs @ query_weights
    values = inputs @ value_weights

    # 计算 attention score（假设缩放系数为1）
    attntion_scores = querys @ keys.T
    # 计算softmax
    attntion_scores_softmax = torch.softmax(attntion_scores, dim=-1)

    # value乘attntion_scores_softmax
    weighted_values = values[:,None] * attntion_scores_softmax.T[:,:,None]
    # 给value加权求和获取output
    outputs = weighted_values.sum(dim=0)

    return {"inputs": inputs, "key_weights": key_weights, "query_weights": query_weights,
            "value_weights": value_weights, "keys": keys, "querys": querys, "values": values,
            "attntion_scores": attntion_scores,
            "attntion_scores_softmax": attntion_scores_softmax, "outputs": outputs}
