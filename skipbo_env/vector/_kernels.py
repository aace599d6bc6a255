"""Numba kernels of the batched engine: the rules of ``skipbo_env.rules`` over arrays.

All compiled code lives in this one module: numba's on-disk cache is keyed on the file of the
compiled function, so one file is one cache key and no kernel keeps a stale inlined helper.
Callees get ``int64`` values, not literal constants (``np.int64(0)``): numba compiles a callee once
more per literal it is passed. The arrays (``hot``, ``cold``, ``turn``, ``moves``, ``pcg``, ``arng``,
``cf``) are in docs/vector.md ("Layout"), the action ids in docs/actions.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ----------------------------------------------------------------- constants
WILD = 13
HAND_SIZE = 5
DECK = 162
PILE_COMPLETE = 12

# action id bases (skipbo_env.rules.ALL_MOVES order)
A_HAND = 0
A_HAND_WILD = 48
A_STOCK = 52
A_DISC = 56
A_DISCARD = 72
A_END = 124
A_PSTOCK = 125
A_PDISC = 129

# hot row: meta
G_CUR = 0  # seat to move
G_WIN = 1  # winner seat + 1, 0 while none
G_DONE = 2  # 0 running, 1 won, 2 truncated (turn limit R23, or move limit)
G_DRAWN = 3  # draw pile size
G_COMPN = 4  # completed pile size
G_BN = 5  # 4 building pile sizes (= the value each pile shows)
G_FRESH = 9  # 1 while the engine's mask buffer row matches this game
G_SEATS = 16  # first seat block
SEAT_HOT = 80
# hot row: offsets inside a seat block
S_HAND = 0  # [0] hand size, [1..13] count of each card value
S_STN = 14  # stock size
S_STOP = 15  # stock top, 0 when empty
S_DN = 16  # 4 discard pile sizes
S_TOP = 20  # 4 discard tops (0 = empty)
S_SEC = 24  # 4 cards below the tops (0 = none)
S_DCNT = 28  # 4 x 13 counts of each value per discard pile
# cold row
K_BUILD = 0  # 4 x 12 building pile cards
K_DRAW = 48  # 162 draw pile cards
K_COMP = K_DRAW + DECK  # 162 completed pile cards
K_SEATS = K_COMP + DECK  # first seat block: stock (S cards), then 4 x CAP discard pile cards
CAP = DECK  # discard pile capacity: a pile can never hold more than the deck

# cf: configuration and per-config offsets
C_N = 0  # players
C_S = 1  # stock size
C_PARTNER = 2  # partner game (R27)
C_WILD_OK = 3  # allow_wild_discard (R18)
C_MUST = 4  # must_play_stock
C_LIMIT = 5  # turn limit (R23)
C_FIRST = 6  # first player, -1 = drawn from the game's generator (R9)
C_NA = 7  # number of actions
C_SC = 8  # cold seat block width (S + 4 * CAP)
C_OBS = 9  # observation size
C_MOVE_LIMIT = 10  # move limit: the game is truncated after this many moves
CF_SIZE = 11

# observation offsets: literals for cached compilation; engine.py asserts at import that they
# equal skipbo_env.encoding's layout (pieces named there in the comments)
OBS_HAND = 0  # hand_counts
OBS_BUILD = 13  # building_values
OBS_SEATS = 13 + 48  # seat0.stock_top: the first seat block
OBS_SEAT_WIDTH = 185  # one seat block; offsets inside it:
OBS_STOCK_SIZE = 14  # stock_size
OBS_HAND_SIZE = 15  # hand_size
OBS_TOPS = 16  # discard_tops
OBS_SECONDS = 16 + 56  # discard_seconds
OBS_COUNTS = 16 + 112  # discard_counts
OBS_DSIZES = 16 + 164  # discard_sizes
OBS_PARTNER = 16 + 168  # is_partner
# offsets in the float32 lookup table ``tab`` (built by engine._obs_tables)
T_HAND = 0  # 6: hand count c -> float32(c) / 5
T_HS = 6  # 6: hand size h -> float32(h / 5)
T_DECK = 12  # 163: size k -> float32(k / 162)
T_DSIZE = T_DECK + 163  # 163: discard size k -> float32(k) / 20
T_CNT = T_DSIZE + 163  # 163 x 13: count c of value v -> float32(c) / (12 or 18)
T_STOCK = T_CNT + 163 * 13  # S+1: stock size k -> float32(k / S)

U32_MASK = np.uint64(0xFFFFFFFF)
PCG_MUL_HI = np.uint64(0x2360ED051FC65DA4)
PCG_MUL_LO = np.uint64(0x4385DF649FCCF645)


# ======================================================== numpy PCG64 protocol
@njit(cache=True)
def _mul_hi64(a, b):
    """High 64 bits of the 128-bit product of two uint64."""
    s32 = np.uint64(32)
    a_lo = a & U32_MASK
    a_hi = a >> s32
    b_lo = b & U32_MASK
    b_hi = b >> s32
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> s32) + (p1 & U32_MASK) + (p2 & U32_MASK)
    return p3 + (p1 >> s32) + (p2 >> s32) + (mid >> s32)


@njit(cache=True)
def pcg_next64(pcg, b):
    """numpy PCG64 ``next_uint64``: advance the 128-bit LCG, then the XSL-RR output."""
    hi = pcg[b, 0]
    lo = pcg[b, 1]
    new_hi = _mul_hi64(lo, PCG_MUL_LO) + hi * PCG_MUL_LO + lo * PCG_MUL_HI
    new_lo = lo * PCG_MUL_LO
    s_lo = new_lo + pcg[b, 3]
    carry = np.uint64(1) if s_lo < new_lo else np.uint64(0)
    s_hi = new_hi + pcg[b, 2] + carry
    pcg[b, 0] = s_hi
    pcg[b, 1] = s_lo
    rot = s_hi >> np.uint64(58)
    x = s_hi ^ s_lo
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@njit(cache=True)
def pcg_next32(pcg, b):
    """numpy's buffered ``next_uint32``: low half of a 64-bit draw, the high half kept for next time."""
    if pcg[b, 4] != 0:
        pcg[b, 4] = 0
        return pcg[b, 5]
    value = pcg_next64(pcg, b)
    pcg[b, 4] = 1
    pcg[b, 5] = value >> np.uint64(32)
    return value & U32_MASK


@njit(cache=True)
def pcg_interval(pcg, b, top):
    """numpy ``random_interval``: uniform in 0..top by masked rejection (top < 2**32)."""
    if top == 0:
        return 0
    limit = np.uint64(top)
    mask = limit
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    value = pcg_next32(pcg, b) & mask
    while value > limit:
        value = pcg_next32(pcg, b) & mask
    return np.int64(value)


@njit(cache=True)
def pcg_integers(pcg, b, high):
    """numpy ``Generator.integers(high)`` for 2 <= high < 2**32 (Lemire's method on 32-bit draws)."""
    rng = np.uint64(high - 1)
    excl = rng + np.uint64(1)
    m = pcg_next32(pcg, b) * excl
    leftover = m & U32_MASK
    if leftover < excl:
        threshold = (U32_MASK - rng) % excl
        while leftover < threshold:
            m = pcg_next32(pcg, b) * excl
            leftover = m & U32_MASK
    return np.int64(m >> np.uint64(32))


@njit(cache=True)
def pcg_shuffle(pcg, b, cold, start, count):
    """numpy ``Generator.shuffle`` of ``cold[b, start:start+count]`` (Fisher-Yates from the end)."""
    for i in range(count - 1, 0, -1):
        j = pcg_interval(pcg, b, i)
        tmp = cold[b, start + i]
        cold[b, start + i] = cold[b, start + j]
        cold[b, start + j] = tmp


# ================================================================ agent stream
@njit(cache=True)
def agent_below(arng, b, k):
    """Uniform int in 0..k-1 from the game's splitmix64 agent stream (bias below k / 2**32)."""
    x = arng[b] + np.uint64(0x9E3779B97F4A7C15)
    arng[b] = x
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(((z >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))


# ==================================================================== the rules
@njit(cache=True)
def hot_base(seat):
    return G_SEATS + seat * SEAT_HOT


@njit(cache=True)
def cold_base(cf, seat):
    return K_SEATS + seat * cf[C_SC]


@njit(cache=True)
def partner_of(cf, seat):
    """The partner's seat in the partner game (R27), -1 otherwise."""
    if cf[C_PARTNER] == 0:
        return -1
    n = cf[C_N]
    return (seat + n // 2) % n


@njit(cache=True)
def _draw(hot, cold, pcg, cf, b, seat, count):
    """Draw ``count`` cards into the seat's hand, recycling the completed pile (R19, R20)."""
    h = hot_base(seat) + S_HAND
    for _ in range(count):
        if hot[b, G_DRAWN] == 0:
            comp = np.int64(hot[b, G_COMPN])
            if comp == 0:
                return  # R20: fewer cards, the turn goes on
            for i in range(comp):  # R19: the completed pile, shuffled, is the new draw pile
                cold[b, K_DRAW + i] = cold[b, K_COMP + i]
            pcg_shuffle(pcg, b, cold, K_DRAW, comp)
            hot[b, G_DRAWN] = comp
            hot[b, G_COMPN] = 0
        top = np.int64(hot[b, G_DRAWN]) - 1
        card = cold[b, K_DRAW + top]
        hot[b, G_DRAWN] = top
        hot[b, h + card] += 1
        hot[b, h] += 1


@njit(cache=True)
def _refill(hot, cold, pcg, cf, b, seat):
    """R10: draw until the hand holds five cards."""
    missing = HAND_SIZE - np.int64(hot[b, hot_base(seat) + S_HAND])
    if missing > 0:
        _draw(hot, cold, pcg, cf, b, seat, missing)


@njit(cache=True)
def deal(hot, cold, turn, moves, pcg, cf, b):
    """Deal a new game in slot ``b`` from its generator, as ``rules.new_game`` does (R6-R10)."""
    n = cf[C_N]
    first = cf[C_FIRST]
    if first < 0:
        first = pcg_integers(pcg, b, n)
    hot[b, :] = 0
    pos = K_DRAW
    for value in range(1, WILD + 1):  # rules.standard_deck order, then numpy's permutation
        copies = 18 if value == WILD else 12
        for _ in range(copies):
            cold[b, pos] = value
            pos += 1
    pcg_shuffle(pcg, b, cold, K_DRAW, np.int64(DECK))
    top = DECK
    stock_size = cf[C_S]
    for i in range(stock_size):
        for k in range(n):
            seat = (first + k) % n
            top -= 1
            cold[b, cold_base(cf, seat) + i] = cold[b, K_DRAW + top]
    for seat in range(n):
        hot[b, hot_base(seat) + S_STN] = stock_size
        hot[b, hot_base(seat) + S_STOP] = cold[b, cold_base(cf, seat) + stock_size - 1]
    hot[b, G_DRAWN] = top
    hot[b, G_CUR] = first
    turn[b] = 0
    moves[b] = 0
    _refill(hot, cold, pcg, cf, b, first)


@njit(cache=True)
def _mark_plays(card, hot, b, base, mask, legal, count):
    """Mark the plays of one top card onto building piles 0..3; return the new legal count."""
    for k in range(4):
        if card == WILD or hot[b, G_BN + k] + 1 == card:
            mask[base + k] = 1
            legal[count] = base + k
            count += 1
    return count


@njit(cache=True)
def legal_actions(hot, cf, b, mask, legal):
    """Fill ``mask`` (zeroed first) and ``legal`` (ids ascending) for the seat to move; return the count.

    The same moves as ``rules.legal.generate_legal_moves``: every play of the
    hand, the stock top and the own discard tops (and the partner's in the
    partner game), then discards and the empty-hand end of turn (R11, R12,
    R16, R18, R21, R27, ``must_play_stock``). Nothing is legal once the game is over.
    """
    for i in range(cf[C_NA]):
        mask[i] = 0
    if hot[b, G_DONE] != 0:
        return 0
    seat = np.int64(hot[b, G_CUR])
    o = hot_base(seat)
    count = np.int64(0)
    for v in range(1, WILD + 1):  # hand plays in id order: value, then pile
        if hot[b, o + v] > 0:
            for k in range(4):
                if v == WILD or hot[b, G_BN + k] + 1 == v:
                    mask[A_HAND + (v - 1) * 4 + k] = 1
                    legal[count] = A_HAND + (v - 1) * 4 + k
                    count += 1
    stock_playable = False
    if hot[b, o + S_STN] > 0:
        before = count
        count = _mark_plays(hot[b, o + S_STOP], hot, b, np.int64(A_STOCK), mask, legal, count)
        stock_playable = count > before
    for d in range(4):
        if hot[b, o + S_DN + d] > 0:
            count = _mark_plays(hot[b, o + S_TOP + d], hot, b, A_DISC + 4 * d, mask, legal, count)
    if cf[C_MUST] == 0 or not stock_playable:
        wild_ok = cf[C_WILD_OK] != 0
        for v in range(1, WILD + 1):
            if hot[b, o + v] > 0 and (v != WILD or wild_ok):
                for d in range(4):
                    mask[A_DISCARD + (v - 1) * 4 + d] = 1
                    legal[count] = A_DISCARD + (v - 1) * 4 + d
                    count += 1
        if hot[b, o + S_HAND] == 0:
            mask[A_END] = 1  # R21
            legal[count] = A_END
            count += 1
    partner = partner_of(cf, seat)
    if partner >= 0:  # R27: the partner's stock top and discard tops
        p = hot_base(partner)
        if hot[b, p + S_STN] > 0:
            count = _mark_plays(hot[b, p + S_STOP], hot, b, np.int64(A_PSTOCK), mask, legal, count)
        for d in range(4):
            if hot[b, p + S_DN + d] > 0:
                count = _mark_plays(hot[b, p + S_TOP + d], hot, b, A_PDISC + 4 * d, mask, legal, count)
    return count


@njit(cache=True)
def _pop_discard(hot, cold, cf, b, seat, d):
    """Take the top of a discard pile; the card below becomes the top."""
    o = hot_base(seat)
    card = hot[b, o + S_TOP + d]
    size = np.int64(hot[b, o + S_DN + d]) - 1
    hot[b, o + S_DN + d] = size
    hot[b, o + S_TOP + d] = hot[b, o + S_SEC + d]
    if size >= 2:
        hot[b, o + S_SEC + d] = cold[b, cold_base(cf, seat) + cf[C_S] + d * CAP + size - 2]
    else:
        hot[b, o + S_SEC + d] = 0
    hot[b, o + S_DCNT + d * 13 + card - 1] -= 1
    return card


@njit(cache=True)
def _push_discard(hot, cold, cf, b, seat, d, card):
    o = hot_base(seat)
    size = np.int64(hot[b, o + S_DN + d])
    cold[b, cold_base(cf, seat) + cf[C_S] + d * CAP + size] = card
    hot[b, o + S_DN + d] = size + 1
    hot[b, o + S_SEC + d] = hot[b, o + S_TOP + d]
    hot[b, o + S_TOP + d] = card
    hot[b, o + S_DCNT + d * 13 + card - 1] += 1


@njit(cache=True)
def _pop_stock(hot, cold, cf, b, seat):
    """Take the stock top; the next card is turned up at once (R14)."""
    o = hot_base(seat)
    card = hot[b, o + S_STOP]
    size = np.int64(hot[b, o + S_STN]) - 1
    hot[b, o + S_STN] = size
    hot[b, o + S_STOP] = cold[b, cold_base(cf, seat) + size - 1] if size > 0 else 0
    return card


@njit(cache=True)
def _end_turn(hot, cold, turn, pcg, cf, b):
    turn[b] += 1
    if turn[b] >= cf[C_LIMIT]:
        hot[b, G_DONE] = 2  # R23: truncated, no winner
        return
    seat = (np.int64(hot[b, G_CUR]) + 1) % cf[C_N]
    hot[b, G_CUR] = seat
    _refill(hot, cold, pcg, cf, b, seat)  # R10


@njit(cache=True)
def _side_stocks_empty(hot, cf, b, seat):
    if hot[b, hot_base(seat) + S_STN] != 0:
        return False
    partner = partner_of(cf, seat)
    return partner < 0 or hot[b, hot_base(partner) + S_STN] == 0


@njit(cache=True)
def apply_action(hot, cold, turn, moves, pcg, cf, b, action):
    """Apply one LEGAL action of the seat to move (unchecked: callers validate external actions).

    As ``GameState.apply``: the whole transition first (refills, end of turn,
    the next seat's refill), then the move count goes up by one; a game that
    reaches the move limit without a winner is then over, truncated.
    """
    _transition(hot, cold, turn, pcg, cf, b, action)
    moves[b] += 1
    if moves[b] >= cf[C_MOVE_LIMIT] and hot[b, G_DONE] == 0:
        hot[b, G_DONE] = 2


@njit(cache=True)
def _transition(hot, cold, turn, pcg, cf, b, action):
    """The state change of one legal action, without the move count."""
    hot[b, G_FRESH] = 0
    seat = np.int64(hot[b, G_CUR])
    o = hot_base(seat)
    from_hand = False
    from_stock = False
    if action < A_STOCK:
        v = action // 4 + 1
        pile = action % 4
        hot[b, o + v] -= 1
        hot[b, o + S_HAND] -= 1
        card = v
        from_hand = True
    elif action < A_DISC:
        pile = action - A_STOCK
        card = _pop_stock(hot, cold, cf, b, seat)
        from_stock = True
    elif action < A_DISCARD:
        pile = (action - A_DISC) % 4
        card = _pop_discard(hot, cold, cf, b, seat, (action - A_DISC) // 4)
    elif action < A_END:  # R16: discard and end the turn
        v = (action - A_DISCARD) // 4 + 1
        hot[b, o + v] -= 1
        hot[b, o + S_HAND] -= 1
        _push_discard(hot, cold, cf, b, seat, (action - A_DISCARD) % 4, v)
        _end_turn(hot, cold, turn, pcg, cf, b)
        return
    elif action == A_END:  # R21
        _end_turn(hot, cold, turn, pcg, cf, b)
        return
    elif action < A_PDISC:
        pile = action - A_PSTOCK
        card = _pop_stock(hot, cold, cf, b, partner_of(cf, seat))
        from_stock = True
    else:
        pile = (action - A_PDISC) % 4
        card = _pop_discard(hot, cold, cf, b, partner_of(cf, seat), (action - A_PDISC) // 4)
    size = np.int64(hot[b, G_BN + pile])
    cold[b, K_BUILD + pile * 12 + size] = card
    size += 1
    if size == PILE_COMPLETE:  # R13: the pile goes to the completed pile, in order
        comp = np.int64(hot[b, G_COMPN])
        for i in range(PILE_COMPLETE):
            cold[b, K_COMP + comp + i] = cold[b, K_BUILD + pile * 12 + i]
        hot[b, G_COMPN] = comp + PILE_COMPLETE
        size = 0
    hot[b, G_BN + pile] = size
    if from_stock and _side_stocks_empty(hot, cf, b, seat):  # R22, R27
        hot[b, G_WIN] = seat + 1
        hot[b, G_DONE] = 1
        return
    if from_hand and hot[b, o + S_HAND] == 0:
        _draw(hot, cold, pcg, cf, b, seat, np.int64(HAND_SIZE))  # R15


# ================================================================= observation
@njit(cache=True)
def _slot(card):
    """One-hot slot of a card place: values 1..12 at 0..11, wild at 12, empty (0) at 13."""
    return 13 if card == 0 else np.int64(card) - 1


@njit(cache=True)
def observe_into(hot, turn, cf, tab, b, viewer, out):
    """Write ``encoding.encode_view(state.view(viewer))`` of game ``b`` into ``out`` (float32)."""
    for i in range(cf[C_OBS]):
        out[i] = 0.0
    n = cf[C_N]
    o = hot_base(viewer)
    for v in range(1, WILD + 1):
        out[OBS_HAND + v - 1] = tab[T_HAND + hot[b, o + v]]
    for k in range(4):
        out[OBS_BUILD + k * 12 + hot[b, G_BN + k]] = 1.0
    partner = partner_of(cf, viewer)
    base = OBS_SEATS
    for rel in range(n):
        seat = (viewer + rel) % n
        p = hot_base(seat)
        out[base + _slot(hot[b, p + S_STOP])] = 1.0
        out[base + OBS_STOCK_SIZE] = tab[T_STOCK + hot[b, p + S_STN]]
        out[base + OBS_HAND_SIZE] = tab[T_HS + hot[b, p + S_HAND]]
        for d in range(4):
            out[base + OBS_TOPS + d * 14 + _slot(hot[b, p + S_TOP + d])] = 1.0
            out[base + OBS_SECONDS + d * 14 + _slot(hot[b, p + S_SEC + d])] = 1.0
            for v in range(13):
                c = hot[b, p + S_DCNT + d * 13 + v]
                if c:
                    out[base + OBS_COUNTS + d * 13 + v] = tab[T_CNT + np.int64(c) * 13 + v]
            out[base + OBS_DSIZES + d] = tab[T_DSIZE + hot[b, p + S_DN + d]]
        out[base + OBS_PARTNER] = 1.0 if seat == partner else 0.0
        base += OBS_SEAT_WIDTH
    out[base] = tab[T_DECK + hot[b, G_DRAWN]]
    out[base + 1] = tab[T_DECK + hot[b, G_COMPN]]
    out[base + 2] = np.float32(turn[b] / cf[C_LIMIT])
    out[base + 3] = 1.0 if (hot[b, G_DONE] == 0 and hot[b, G_CUR] == viewer) else 0.0


# ===================================================================== agents
# The greedy agent mirrors skipbo_env.bots.greedy.greedy_move / greedy_discard rule for rule;
# each decision ranks its candidates with one integer (lower is better; the rank
# tuples of the policy mapped to bounded integers) and breaks ties uniformly.
@njit(cache=True)
def _pile_of(a):
    """Building pile of a play id."""
    return a % 4 if a < A_END else (a - A_PSTOCK) % 4


@njit(cache=True)
def _card_of_play(hot, b, o, p, a):
    """The card a (non-stock) play moves: hand value, own or partner discard top, partner stock top."""
    if a < A_STOCK:
        return a // 4 + 1
    if a < A_DISCARD:
        return np.int64(hot[b, o + S_TOP + (a - A_DISC) // 4])
    if a < A_PDISC:
        return np.int64(hot[b, p + S_STOP])
    return np.int64(hot[b, p + S_TOP + (a - A_PDISC) // 4])


@njit(cache=True)
def _greedy_class(a):
    """1 own stock play, 2 other play except a hand wild, 3 discard, 4 end turn, 0 hand wild play."""
    if A_STOCK <= a < A_DISC:
        return 1
    if a < A_HAND_WILD or (A_DISC <= a < A_DISCARD) or a >= A_PSTOCK:
        return 2
    if A_DISCARD <= a < A_END:
        return 3
    if a == A_END:
        return 4
    return 0


@njit(cache=True)
def _greedy_rank(hot, b, o, p, cls, a, stock_top, discard_card):
    """The policy's preference for action ``a`` of class ``cls`` (lower is better)."""
    if cls == 1:  # stock play: onto the highest pile
        return 12 - np.int64(hot[b, G_BN + _pile_of(a)])
    if cls == 2:  # (enables the stock top, not a wild, from the hand, wild onto the highest pile)
        card = _card_of_play(hot, b, o, p, a)
        shows = np.int64(hot[b, G_BN + _pile_of(a)]) + 1
        enables = stock_top != 0 and stock_top != WILD and shows == stock_top - 1
        wild = card == WILD
        rank = (0 if enables else 1000) + (100 if wild else 0) + (0 if a < A_STOCK else 50)
        return rank + (12 - shows if wild else 0)
    # cls == 3: a discard of ``discard_card`` onto pile d (other cards are not candidates)
    if (a - A_DISCARD) // 4 + 1 != discard_card:
        return 1 << 30
    top = np.int64(hot[b, o + S_TOP + (a - A_DISCARD) % 4])
    empty = hot[b, o + S_DN + (a - A_DISCARD) % 4] == 0
    if discard_card == WILD:
        if empty:
            return 0
        return 100 if top == WILD else 200 + 50 - top
    if empty:
        return 200
    if top == WILD:
        return 500
    if top == discard_card + 1:
        return 0
    if top == discard_card:
        return 100
    return 300 + top if top > discard_card else 400 + 50 - top


@njit(cache=True)
def _discard_card(hot, b, legal, count):
    """greedy_discard's card: a wild if one may be discarded, else the number farthest from fitting
    any building pile (cards_until_playable), the higher number on a tie; 0 when no discard is legal."""
    best = 0
    best_key = -1
    for i in range(count):
        a = np.int64(legal[i])
        if A_DISCARD <= a < A_END:
            card = (a - A_DISCARD) // 4 + 1
            if card == WILD:
                return WILD
            until = 12
            for k in range(4):
                until = min(until, (card - np.int64(hot[b, G_BN + k]) - 1 + 24) % 12)
            key = until * 16 + card
            if key > best_key:
                best_key = key
                best = card
    return best


@njit(cache=True)
def draw_below(arng, apcg, b, row, k):
    """Uniform int in 0..k-1: from the game's splitmix64 agent stream when ``row < 0``, else exactly
    what numpy's ``Generator.integers(k)`` returns for the generator whose PCG64 state is
    ``apcg[row]`` (no draw for k = 1, as numpy): a tournament's agents replayed in the engine."""
    if row < 0:
        return agent_below(arng, b, k)
    if k == 1:
        return 0
    return pcg_integers(apcg, row, k)


@njit(cache=True)
def greedy_choice(hot, cf, arng, apcg, row, b, legal, count):
    """``bots.greedy.greedy_move`` over the legal list; ties uniform from the agent stream.

    Classes in priority order: own stock plays (onto the highest pile), other
    plays except hand wilds (first one that makes the stock top playable, then
    numbers before wilds, hand before discard tops, a wild onto the highest
    pile), discards (``greedy_discard``: the card, then the pile ranking),
    end turn; with none of these (only hand wilds playable) a uniformly
    random legal action.
    """
    cls = np.int64(5)
    for i in range(count):
        c = _greedy_class(np.int64(legal[i]))
        if c != 0 and c < cls:
            cls = c
    if cls == 4:
        return A_END
    if cls == 5:
        return np.int64(legal[draw_below(arng, apcg, b, row, count)])
    seat = np.int64(hot[b, G_CUR])
    o = hot_base(seat)
    partner = partner_of(cf, seat)
    p = hot_base(partner) if partner >= 0 else o
    stock_top = np.int64(hot[b, o + S_STOP])
    card = _discard_card(hot, b, legal, count) if cls == 3 else 0
    best = 1 << 40
    ties = np.int64(0)
    for i in range(count):
        a = np.int64(legal[i])
        if _greedy_class(a) == cls:
            r = _greedy_rank(hot, b, o, p, cls, a, stock_top, card)
            if r < best:
                best = r
                ties = 1
            elif r == best:
                ties += 1
    k = draw_below(arng, apcg, b, row, ties)
    for i in range(count):
        a = np.int64(legal[i])
        if _greedy_class(a) == cls and _greedy_rank(hot, b, o, p, cls, a, stock_top, card) == best:
            if k == 0:
                return a
            k -= 1
    return -1


# ======================================================= the heuristic's planner
# ``bots.heuristic._Search`` over arrays: the same depth-first search over the plays of the cards
# the seat can see, the same scores added in the same order (so the same floats), the same visit
# order and node budget. Inputs: a position vector (``H_*`` below, packed from the seat's view by
# ``heuristic_position`` in the engine or by ``skipbo_env.vector.compiled_heuristic`` from the decoded
# fields) and the weight vector (``W_*``, ``HeuristicWeights`` in field order).
H_HAND = 0  # 14: count of each card value (index = value, 0 unused)
H_BUILD = 14  # 4 building pile values
H_STOCK = 18  # own stock top, 0 none
H_LAST = 19  # 1 when the own stock holds one card
H_OWN_N = 20  # 4: own discard cards known (0..2)
H_OWN = 24  # 4 x 2: own discard cards, top first
H_OWN_SIZE = 32  # 4 own discard pile sizes
H_PARTNER = 36  # 1 in the partner game
H_PSTOCK = 37  # partner stock top, 0 none
H_PN = 38  # 4: partner discard cards known
H_PCARDS = 42  # 4 x 2: partner discard cards, top first
H_DRAWABLE = 50  # draw pile + completed pile sizes
H_WILD_OK = 51  # allow_wild_discard
H_MUST = 52  # must_play_stock
H_OTHERS = 53  # number of other seats
H_SEATS = 54  # per other seat, in play order: stock top (0 none), 4 discard tops (0 none), is partner
H_SEAT_W = 6
H_SIZE = H_SEATS + 5 * H_SEAT_W

W_STOCK = 0
W_PSTOCK = 1
W_REFILL = 2
W_WILD_SPENT = 3
W_HAND_PLAY = 4
W_DISCARD_PLAY = 5
W_PDISCARD_PLAY = 6
W_COMPLETED = 7
W_DANGER = 8
W_PHELP = 9
W_OWN_REACH = 10
W_UNSEEN = 11
W_OWN_UNSEEN = 12
W_DECAY = 13
W_DRY_CARDS = 14
W_DRY_DANGER = 15
W_DRY_PLAY = 16
W_DRY_COMPLETED = 17
W_MAX_NODES = 18
W_STOCK_DETOUR = 19
W_STOCK_NEED = 20
W_SIZE = 21  # the weights' fields; then two tables of powers (``compiled_heuristic.weights_vector``):
W_POWERS = W_SIZE  # 13: unseen_card ** k for k = 0..12
W_OWN_POWERS = W_SIZE + 13  # 13: own_unseen_card ** k
W_VECTOR = W_SIZE + 26

# Seat kinds of the advance kernels (``engine.SeatKind``, which checks these at import).
KIND_LEARNER = 0  # the caller's seat: advancing stops there
KIND_RANDOM = 1
KIND_GREEDY = 2
KIND_OUTSIDE = 3  # an agent outside the kernels: advancing stops there
KIND_HEURISTIC = 4

PLAN_MAX = 64  # moves in a plan: at most 5 hand + 4 * 2 own + 1 + 4 * 2 partner cards + the last
_MAX_CHAIN = HAND_SIZE + 4
_EMPTY = -1  # a discard pile top in the plan: empty (0 = a card the seat cannot see)
_SEEN_SLOTS = 4096  # open-addressing table of expanded positions (grows for larger node budgets)
_FRAME = 48  # candidate plays per position (stock 4 + own tops 16 + partner 4 + 16 + hand 12 + 4)
_DEPTH = 32  # plays in one sequence (5 hand + 8 own + 8 partner + 2 stocks, rounded up)


@njit(cache=True)
def _reach(target, key, numbers, jokers, powers):
    """``bots.heuristic.reach_chance`` over the pile values ``key``; ``numbers[v]`` true when held;
    ``powers[k]``: the chance ``q ** k`` that ``k`` missing numbers all come from unseen cards.
    The piles' failures multiply in ``key`` order."""
    if target == 0:
        return 0.0
    if target == WILD:
        return 1.0
    none = 1.0
    for i in range(4):
        pile = key[i]
        length = (target - pile - 1) % PILE_COMPLETE
        if length > _MAX_CHAIN:
            continue
        missing = length - jokers
        for j in range(length):
            if numbers[(pile + j) % PILE_COMPLETE + 1]:
                missing -= 1
        if missing <= 0:
            return 1.0
        none *= 1.0 - powers[missing]
    return 1.0 - none


@njit(cache=True)
def _placement(card, top):
    """``bots.heuristic.placement_score``; ``top`` -1 empty, 0 unknown."""
    if top == 0:
        return 0.0
    if card == WILD:
        if top == _EMPTY:
            return 1.0
        return 0.0 if top == WILD else -1.0
    if top == _EMPTY:
        return 0.5 + card / 12.0
    if top == WILD:
        return -6.0
    if top == card + 1:
        return 4.0
    if top == card:
        return 2.5
    if top > card:
        return 1.5 - 0.2 * (top - card)
    return -2.0 - 0.2 * (card - top)


@njit(cache=True)
def _sorted4(building, key):
    for i in range(4):
        key[i] = building[i]
    for i in range(1, 4):
        v = key[i]
        j = i - 1
        while j >= 0 and key[j] > v:
            key[j + 1] = key[j]
            j -= 1
        key[j + 1] = v


@njit(cache=True)
def _table(key, nseat, stop, numbers, jokers, weight, powers):
    """``_Search._table_value``: minus each other seat's weighted chance to reach its stock top."""
    value = 0.0
    for s in range(nseat):
        value -= weight[s] * _reach(stop[s], key, numbers[s], jokers[s], powers)
    return value


@njit(cache=True)
def _own_top(pos, depth, d):
    """The own discard pile's top at this point of the plan: a card, -1 empty, 0 unknown."""
    dep = depth[d]
    if dep < pos[H_OWN_N + d]:
        return pos[H_OWN + 2 * d + dep]
    return _EMPTY if dep >= pos[H_OWN_SIZE + d] else 0


@njit(cache=True)
def _own_reach(pos, hand, depth, key, wts, numbers):
    top = pos[H_STOCK]
    if top == 0 or top == WILD:
        return 0.0
    numbers[:] = False
    for c in range(1, PILE_COMPLETE + 1):
        if hand[c]:
            numbers[c] = True
    jokers = hand[WILD]
    for d in range(4):
        card = _own_top(pos, depth, d)
        if card == WILD:
            jokers += 1
        elif card > 0:
            numbers[card] = True
    value = wts[W_OWN_REACH] * _reach(top, key, numbers, jokers, wts[W_OWN_POWERS:W_OWN_POWERS + PILE_COMPLETE + 1])
    if wts[W_STOCK_NEED] != 0.0:  # the fewest numbers missing from some pile to the stock top
        need = PILE_COMPLETE
        for i in range(4):
            missing = 0
            for j in range((top - key[i] - 1) % PILE_COMPLETE):  # bots.heuristic.CHAIN[key[i]][top]
                if not numbers[(key[i] + j) % PILE_COMPLETE + 1]:
                    missing += 1
            need = min(need, max(0, missing - jokers))
        value -= wts[W_STOCK_NEED] * need
    return value


@njit(cache=True)
def _keep(pos, hand, card, key):
    """``_Search._keep_value``: how much a hand card is worth keeping rather than discarding."""
    if card == WILD:
        return 50.0
    dist = 12
    for i in range(4):
        dist = min(dist, (card - key[i] - 1) % PILE_COMPLETE)
    value = max(0, 4 - dist) * 1.5
    top = pos[H_STOCK]
    if top != 0 and top != WILD:
        for i in range(4):
            length = min((top - key[i] - 1) % PILE_COMPLETE, HAND_SIZE)
            found = False
            for j in range(length):
                if (key[i] + j) % PILE_COMPLETE + 1 == card:
                    found = True
                    break
            if found:
                value += 4.0
                break
    if hand[card] >= 2:
        value -= 2.0
    return value


@njit(cache=True)
def _best_discard(pos, hand, depth, key):
    """``_Search._best_discard``: (value, action id), -1 when no card may be discarded."""
    best_value = -np.inf
    best = -1
    for card in range(1, WILD + 1):
        if hand[card] == 0 or (card == WILD and pos[H_WILD_OK] == 0):
            continue
        keep = _keep(pos, hand, card, key)
        empty_seen = False
        for d in range(4):
            top = _own_top(pos, depth, d)
            if top == _EMPTY:
                if empty_seen:
                    continue
                empty_seen = True
            value = _placement(card, top) - keep
            if value > best_value:
                best_value = value
                best = A_DISCARD + 4 * (card - 1) + d
    return best_value, best


@njit(cache=True)
def _node_code(hand, key, depth, pdepth):
    """The search position (hand multiset, sorted piles, discard depths) as one int64."""
    code = 0
    for c in range(1, WILD + 1):
        for _ in range(hand[c]):
            code = code * 14 + c
    for i in range(4):
        code = code * 12 + key[i]
    for d in range(4):
        code = code * 3 + depth[d]
    for d in range(4):
        code = code * 3 + pdepth[d]
    return code + 1


@njit(cache=True)
def _seen_add(table, code):
    """Add ``code`` to the open-addressing set; False when it was there already."""
    size = table.shape[0]  # a power of two
    h = np.int64((np.uint64(code) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & (size - 1)
    while True:
        v = table[h]
        if v == 0:
            table[h] = code
            return True
        if v == code:
            return False
        h = (h + 1) & (size - 1)


@njit(cache=True)
def _gen_plays(pos, hand, building, depth, pdepth, acts, cards, distinct, first):
    """``_Search._plays``: candidate plays, one pile per distinct pile value, in the search's order
    (``distinct`` and ``first``: scratch of 4 and 14 ints)."""
    n = 0
    nd = 0
    first[:] = -1
    for b in range(4):
        v = building[b] + 1
        if first[v] < 0:
            first[v] = b
            distinct[nd] = b
            nd += 1
    # (card, action base) in order: stock, own discard tops, partner stock, partner tops, hand
    for src in range(1 + 4 + 1 + 4 + WILD):
        if src == 0:
            card = pos[H_STOCK]
            base = A_STOCK
        elif src <= 4:
            d = src - 1
            card = pos[H_OWN + 2 * d + depth[d]] if depth[d] < pos[H_OWN_N + d] else 0
            base = A_DISC + 4 * d
        elif src == 5:
            card = pos[H_PSTOCK] if pos[H_PARTNER] else 0
            base = A_PSTOCK
        elif src <= 9:
            d = src - 6
            card = pos[H_PCARDS + 2 * d + pdepth[d]] if pos[H_PARTNER] and pdepth[d] < pos[H_PN + d] else 0
            base = A_PDISC + 4 * d
        else:
            card = src - 9
            if hand[card] == 0:
                card = 0
            base = A_HAND + 4 * (card - 1)
        if card == 0:
            continue
        if card == WILD:
            for i in range(nd):
                acts[n] = base + distinct[i]
                cards[n] = card
                n += 1
        elif first[card] >= 0:
            acts[n] = base + first[card]
            cards[n] = card
            n += 1
    return n


@njit(cache=True)
def _take_back(a, card, hand, depth, pdepth, building, pile_value):
    """``_Search._undo``: take back play ``a`` of ``card``; ``pile_value`` is its pile's value before."""
    if a < A_STOCK:
        hand[card] += 1
    elif a >= A_PDISC:
        pdepth[(a - A_PDISC) // 4] -= 1
    elif A_DISC <= a < A_DISCARD:
        depth[(a - A_DISC) // 4] -= 1
    building[_pile_of(a)] = pile_value


@njit(cache=True)
def _record(out, path, k, move):
    """``_Search._consider``'s new best: ``path[:k]`` then ``move`` into ``out``; its length."""
    for i in range(k):  # a loop, not a slice copy: numba compiles the slice's error message (seconds)
        out[i] = path[i]
    out[k] = move
    return k + 1


@njit(cache=True)
def heuristic_plan(pos, wts, out):
    """``bots.heuristic._Search.run``: the best play sequence into ``out``; returns its length
    (0 when the search considered nothing, where the policy falls back to the greedy move)."""
    hand = pos[H_HAND:H_HAND + 14].copy()
    building = pos[H_BUILD:H_BUILD + 4].copy()
    depth = np.zeros(4, np.int64)
    pdepth = np.zeros(4, np.int64)
    key = np.empty(4, np.int64)
    numbers = np.zeros(PILE_COMPLETE + 2, np.bool_)
    # the other seats that count: weight, stock top, numbers and wilds on their discard tops
    nseat = np.int64(0)
    weight = np.empty(5, np.float64)
    stop = np.empty(5, np.int64)
    snumbers = np.zeros((5, PILE_COMPLETE + 2), np.bool_)
    sjokers = np.zeros(5, np.int64)
    drawable = pos[H_DRAWABLE]
    dry = max(0.0, 1.0 - drawable / wts[W_DRY_CARDS]) if wts[W_DRY_CARDS] > 0 else 0.0
    danger_scale = 1.0 - dry * (1.0 - wts[W_DRY_DANGER])
    play_credit = dry * wts[W_DRY_PLAY]
    completed_credit = wts[W_COMPLETED] + dry * wts[W_DRY_COMPLETED]
    can_draw = min(HAND_SIZE, drawable)
    decay = 1.0
    for s in range(pos[H_OTHERS]):
        o = H_SEATS + s * H_SEAT_W
        top = pos[o]
        if top != 0 and top != WILD:
            for d in range(4):
                c = pos[o + 1 + d]
                if c == WILD:
                    sjokers[nseat] += 1
                elif c != 0:
                    snumbers[nseat, c] = True
            scale = -wts[W_PHELP] if pos[o + 5] else wts[W_DANGER]
            scale *= decay * danger_scale
            weight[nseat] = scale
            stop[nseat] = top
            nseat += 1
        decay *= wts[W_DECAY]
    q = wts[W_POWERS:W_POWERS + PILE_COMPLETE + 1]  # unseen_card ** k
    max_nodes = np.int64(wts[W_MAX_NODES])
    stock_top = pos[H_STOCK]
    last_stock = pos[H_LAST] != 0
    must = pos[H_MUST] != 0

    slots = _SEEN_SLOTS
    while slots < 2 * max_nodes:  # at most max_nodes positions are stored: keep the table half empty
        slots *= 2
    seen = np.zeros(slots, np.int64)
    distinct = np.empty(4, np.int64)
    first = np.empty(PILE_COMPLETE + 2, np.int64)
    acts = np.empty((_DEPTH, _FRAME), np.int64)
    cards = np.empty((_DEPTH, _FRAME), np.int64)
    count = np.zeros(_DEPTH, np.int64)
    idx = np.zeros(_DEPTH, np.int64)
    hsize = np.zeros(_DEPTH, np.int64)
    undo_pile = np.zeros(_DEPTH, np.int64)
    undo_credit = np.zeros(_DEPTH, np.float64)
    path = np.empty(_DEPTH, np.int64)
    best_value = -np.inf
    best_len = 0
    credit = 0.0
    nodes = 0
    k = np.int64(0)
    enter = True
    while True:
        back = False  # this position is done: return to its parent, which takes back its play
        if enter:  # _visit at depth k (path[:k] played)
            enter = False
            _sorted4(building, key)
            back = not (nodes < max_nodes and _seen_add(seen, _node_code(hand, key, depth, pdepth)))
            if not back:
                nodes += 1
                table = _table(key, nseat, stop, snumbers, sjokers, weight, q)
                size = 0
                for c in range(1, WILD + 1):
                    size += hand[c]
                hsize[k] = size
                fits = False
                if stock_top == WILD:
                    fits = True
                elif stock_top != 0:
                    for i in range(4):
                        if building[i] == stock_top - 1:
                            fits = True
                if not (must and fits):
                    if size:
                        dvalue, dmove = _best_discard(pos, hand, depth, key)
                        if dmove >= 0:
                            value = credit + table + _own_reach(pos, hand, depth, key, wts, numbers) + dvalue
                            if value > best_value:
                                best_value = value
                                best_len = _record(out, path, k, dmove)
                    else:
                        value = credit + table + _own_reach(pos, hand, depth, key, wts, numbers)
                        if value > best_value:
                            best_value = value
                            best_len = _record(out, path, k, np.int64(A_END))
                count[k] = _gen_plays(pos, hand, building, depth, pdepth, acts[k], cards[k], distinct, first)
                idx[k] = 0
        if back or idx[k] >= count[k]:
            if k == 0:
                break
            k -= 1
            _take_back(acts[k, idx[k]], cards[k, idx[k]], hand, depth, pdepth, building, undo_pile[k])
            credit = undo_credit[k]
            idx[k] += 1
            continue
        # _apply the next play of this position
        a = acts[k, idx[k]]
        card = cards[k, idx[k]]
        pile = _pile_of(a)
        undo_pile[k] = building[pile]
        undo_credit[k] = credit
        credit += play_credit
        stock_src = A_STOCK <= a < A_DISC
        pstock_src = A_PSTOCK <= a < A_PDISC
        if a < A_STOCK:
            hand[card] -= 1
            if card != WILD:
                credit += wts[W_HAND_PLAY]
        elif a >= A_PDISC:
            pdepth[(a - A_PDISC) // 4] += 1
            credit += wts[W_PDISCARD_PLAY]
        elif a >= A_DISC and a < A_DISCARD:
            depth[(a - A_DISC) // 4] += 1
            credit += wts[W_DISCARD_PLAY]
        if card == WILD and not stock_src and not pstock_src:
            credit -= wts[W_WILD_SPENT]
        building[pile] += 1
        if building[pile] == PILE_COMPLETE:
            building[pile] = 0
            credit += completed_credit
        final = True
        if stock_src:
            _sorted4(building, key)
            bonus = wts[W_STOCK] * (10.0 if last_stock else 1.0) - wts[W_STOCK_DETOUR] * k
            value = credit + bonus + _table(key, nseat, stop, snumbers, sjokers, weight, q)
        elif pstock_src:
            _sorted4(building, key)
            value = credit + wts[W_PSTOCK] + _table(key, nseat, stop, snumbers, sjokers, weight, q)
        elif a < A_STOCK and hsize[k] == 1 and can_draw:
            refill = wts[W_REFILL] * can_draw / HAND_SIZE
            _sorted4(building, key)
            value = credit + refill + 0.5 * _table(key, nseat, stop, snumbers, sjokers, weight, q)
        else:
            final = False
        if final:
            if value > best_value:
                best_value = value
                best_len = _record(out, path, k, a)
            _take_back(a, card, hand, depth, pdepth, building, undo_pile[k])
            credit = undo_credit[k]
            idx[k] += 1
        else:
            path[k] = a
            k += 1
            enter = True
    return best_len


# ------------------------------------------------- the heuristic agent in the engine
# HeuristicPolicy's plan cache per (game, seat) row ``r = b * n + seat``: ``plans[r]`` the plan,
# ``hstate[r]`` = (plan length, next index, expectation valid), ``expect[r]`` the signature the
# next decision must show for the rest of the plan to be played without a new search.
H_SIG = 40  # signature: hand 13, piles 4, stock top/size, tops 4, seconds 4, partner 1 + 9, drawable, turn
HS_LEN = 0
HS_POS = 1
HS_OK = 2


@njit(cache=True)
def heuristic_position(hot, cf, b, seat, pos):
    """The planner's position vector (``H_*``) of ``seat`` in game ``b``: what its view shows."""
    pos[:] = 0
    o = hot_base(seat)
    for v in range(1, WILD + 1):
        pos[H_HAND + v] = hot[b, o + S_HAND + v]
    for i in range(4):
        pos[H_BUILD + i] = hot[b, G_BN + i]
    pos[H_STOCK] = hot[b, o + S_STOP]
    pos[H_LAST] = 1 if hot[b, o + S_STN] == 1 else 0
    for d in range(4):
        size = np.int64(hot[b, o + S_DN + d])
        pos[H_OWN_N + d] = min(size, 2)
        pos[H_OWN + 2 * d] = hot[b, o + S_TOP + d]
        pos[H_OWN + 2 * d + 1] = hot[b, o + S_SEC + d]
        pos[H_OWN_SIZE + d] = size
    partner = partner_of(cf, seat)
    if partner >= 0:
        p = hot_base(partner)
        pos[H_PARTNER] = 1
        pos[H_PSTOCK] = hot[b, p + S_STOP]
        for d in range(4):
            pos[H_PN + d] = min(np.int64(hot[b, p + S_DN + d]), 2)
            pos[H_PCARDS + 2 * d] = hot[b, p + S_TOP + d]
            pos[H_PCARDS + 2 * d + 1] = hot[b, p + S_SEC + d]
    pos[H_DRAWABLE] = np.int64(hot[b, G_DRAWN]) + np.int64(hot[b, G_COMPN])
    pos[H_WILD_OK] = cf[C_WILD_OK]
    pos[H_MUST] = cf[C_MUST]
    n = cf[C_N]
    pos[H_OTHERS] = n - 1
    for s in range(1, n):
        other = (seat + s) % n
        q = hot_base(other)
        h = H_SEATS + (s - 1) * H_SEAT_W
        pos[h] = hot[b, q + S_STOP]
        for d in range(4):
            pos[h + 1 + d] = hot[b, q + S_TOP + d]
        pos[h + 5] = 1 if other == partner else 0


@njit(cache=True)
def _heuristic_signature(hot, turn, cf, b, seat, sig):
    """What a plan depends on (``bots.heuristic._signature``) as integers."""
    o = hot_base(seat)
    for v in range(1, WILD + 1):
        sig[v - 1] = hot[b, o + S_HAND + v]
    for i in range(4):
        sig[13 + i] = hot[b, G_BN + i]
    sig[17] = hot[b, o + S_STOP]
    sig[18] = hot[b, o + S_STN]
    for d in range(4):
        sig[19 + d] = hot[b, o + S_TOP + d]
        sig[23 + d] = hot[b, o + S_SEC + d]
    partner = partner_of(cf, seat)
    sig[27] = 1 if partner >= 0 else 0
    p = hot_base(partner) if partner >= 0 else o
    for k in range(9):
        sig[28 + k] = 0
    if partner >= 0:
        sig[28] = hot[b, p + S_STOP]
        for d in range(4):
            sig[29 + d] = hot[b, p + S_TOP + d]
            sig[33 + d] = hot[b, p + S_SEC + d]
    sig[37] = np.int64(hot[b, G_DRAWN]) + np.int64(hot[b, G_COMPN])
    sig[38] = turn[b]
    sig[39] = 0


@njit(cache=True)
def heuristic_choice(hot, turn, cf, arng, apcg, drow, row, b, legal, count, wts, plans, hstate, expect, pos, sig):
    """``HeuristicPolicy.__call__`` for the seat to move in game ``b``, plan cache row ``row`` (its
    weights ``wts[row]``).

    Plans (:func:`heuristic_plan`) unless the cached plan goes on and the position is the one it
    predicted; a planned move that is not legal falls back to the greedy move (its draws as
    :func:`draw_below` with stream row ``drow``).
    """
    seat = np.int64(hot[b, G_CUR])
    _heuristic_signature(hot, turn, cf, b, seat, sig)
    same = hstate[row, HS_POS] < hstate[row, HS_LEN] and hstate[row, HS_OK] != 0
    if same:
        for k in range(H_SIG):
            if sig[k] != expect[row, k]:
                same = False
                break
    if not same:
        heuristic_position(hot, cf, b, seat, pos)
        hstate[row, HS_LEN] = heuristic_plan(pos, wts[row], plans[row])
        hstate[row, HS_POS] = 0
    move = -1
    if hstate[row, HS_POS] < hstate[row, HS_LEN]:
        move = plans[row, hstate[row, HS_POS]]
        hstate[row, HS_POS] += 1
    found = False
    for i in range(count):
        if np.int64(legal[i]) == move:
            found = True
            break
    if not found:
        hstate[row, HS_LEN] = 0
        hstate[row, HS_POS] = 0
        hstate[row, HS_OK] = 0
        return greedy_choice(hot, cf, arng, apcg, drow, b, legal, count)
    hstate[row, HS_OK] = 0
    if hstate[row, HS_POS] < hstate[row, HS_LEN] and move < A_STOCK:  # _predict: a hand play
        card = move // 4 + 1
        left = 0
        for v in range(13):
            expect[row, v] = sig[v]
            left += sig[v]
        expect[row, card - 1] -= 1
        if left > 1:  # R15: emptying the hand draws unknown cards
            for k in range(13, H_SIG):
                expect[row, k] = sig[k]
            pile = move % 4
            expect[row, 13 + pile] = (sig[13 + pile] + 1) % PILE_COMPLETE
            hstate[row, HS_OK] = 1
    return move


@njit(cache=True)
def _advance_game(hot, cold, turn, moves, pcg, cf, arng, apcg, exact, b, seat_kinds, wts, plans, hstate, expect,
                  mask, legal, pos, sig):
    """Play game ``b``'s in-engine seats until a seat of another kind is to move or the game ends.

    ``seat_kinds[seat]``: ``KIND_RANDOM``, ``KIND_GREEDY``, ``KIND_HEURISTIC`` (its plan cache is row
    ``b * n + seat``; with ``plans`` None it stops like an outside seat, and numba compiles this
    kernel without the planner). Their draws come from the numpy stream ``apcg[b * n + seat]``
    when ``exact`` (:func:`draw_below`), else from the game's splitmix64 agent stream. ``mask``,
    ``legal``, ``pos`` and ``sig`` are scratch. Returns the number of decisions played.
    """
    n = cf[C_N]
    played = 0
    while hot[b, G_DONE] == 0:
        seat = np.int64(hot[b, G_CUR])
        kind = seat_kinds[seat]
        if kind != KIND_RANDOM and kind != KIND_GREEDY and kind != KIND_HEURISTIC:
            break
        row = b * n + seat
        drow = row if exact else -1
        count = legal_actions(hot, cf, b, mask, legal)
        if kind == KIND_RANDOM:
            a = np.int64(legal[draw_below(arng, apcg, b, drow, count)])
        elif kind == KIND_GREEDY:
            a = greedy_choice(hot, cf, arng, apcg, drow, b, legal, count)
        elif plans is None:  # a test of the argument's type: numba prunes the planner's branch
            break
        else:
            a = heuristic_choice(hot, turn, cf, arng, apcg, drow, row, b, legal, count, wts, plans, hstate, expect,
                                 pos, sig)
        apply_action(hot, cold, turn, moves, pcg, cf, b, a)
        played += 1
    return played


@njit(cache=True)
def tour_advance(hot, cold, turn, moves, pcg, cf, arng, apcg, kinds, wts, plans, hstate, expect):
    """Play the in-engine seats of a tournament until each game waits for an outside agent or ends.

    ``kinds[b, seat]``: ``KIND_RANDOM``, ``KIND_GREEDY``, ``KIND_HEURISTIC`` (their choices drawn from the numpy stream
    ``apcg[b * n + seat]`` exactly as the Python agents draw from their generators), any other
    value an outside agent. Returns the number of decisions played.
    """
    mask = np.empty(cf[C_NA], np.int8)
    legal = np.empty(cf[C_NA], np.uint8)
    pos = np.empty(H_SIZE, np.int64)
    sig = np.empty(H_SIG, np.int64)
    played = 0
    for b in range(hot.shape[0]):
        played += _advance_game(hot, cold, turn, moves, pcg, cf, arng, apcg, True, b, kinds[b], wts, plans, hstate,
                                expect, mask, legal, pos, sig)
    return played


@njit(cache=True)
def agent_choice(hot, cf, arng, nopcg, b, kind, legal, count):
    """``KIND_RANDOM``: RandomAgent (uniform legal action); ``KIND_GREEDY``: GreedyAgent (both from the game's agent
    stream; ``nopcg`` is any (1, 6) uint64 array, unused)."""
    if kind == KIND_RANDOM:
        return np.int64(legal[agent_below(arng, b, count)])
    return greedy_choice(hot, cf, arng, nopcg, -1, b, legal, count)


# ============================================================== batch kernels
@njit(cache=True)
def batch_deal(hot, cold, turn, moves, pcg, cf, which):
    """Deal new games in the slots where ``which`` is nonzero."""
    for b in range(hot.shape[0]):
        if which[b]:
            deal(hot, cold, turn, moves, pcg, cf, b)


@njit(cache=True)
def batch_masks(hot, cf, masks, legal, counts):
    """Legal-action masks of the seat to move in every game (zero rows for games over).

    ``legal[b, :counts[b]]`` receives the legal action ids in ascending order.
    """
    for b in range(hot.shape[0]):
        counts[b] = legal_actions(hot, cf, b, masks[b], legal[b])
        hot[b, G_FRESH] = 1


@njit(cache=True)
def batch_observe(hot, turn, cf, tab, seats, out):
    """Observation vectors; ``seats[b] < 0`` means the seat to move."""
    for b in range(hot.shape[0]):
        seat = seats[b]
        if seat < 0:
            seat = np.int64(hot[b, G_CUR])
        observe_into(hot, turn, cf, tab, b, seat, out[b])


@njit(cache=True)
def batch_observe_rows(hot, turn, cf, tab, rows, seats, out):
    """Observation of ``seats[i]`` in game ``rows[i]`` into ``out[i]``."""
    for i in range(rows.shape[0]):
        observe_into(hot, turn, cf, tab, rows[i], seats[i], out[i])


@njit(cache=True)
def batch_check(hot, cf, masks, legal, counts, rows, actions, err):
    """Validate ``actions[i]`` for game ``rows[i]``; on the first bad one set ``err`` = (i, code), return False.

    The mask buffer row is reused while the game has not changed since
    :func:`batch_masks` (flag ``G_FRESH``), else recomputed with its legal
    list. Codes: 1 action id out of range, 2 game over, 3 not legal here.
    """
    na = cf[C_NA]
    for i in range(rows.shape[0]):
        a = actions[i]
        b = rows[i]
        if a < 0 or a >= na:
            err[0] = i
            err[1] = 1
            return False
        if hot[b, G_DONE] != 0:
            err[0] = i
            err[1] = 2
            return False
        if hot[b, G_FRESH] == 0:
            counts[b] = legal_actions(hot, cf, b, masks[b], legal[b])
            hot[b, G_FRESH] = 1
        if masks[b, a] == 0:
            err[0] = i
            err[1] = 3
            return False
    return True


@njit(cache=True)
def batch_apply(hot, cold, turn, moves, pcg, cf, rows, actions):
    """Apply already validated actions: ``actions[i]`` in game ``rows[i]``."""
    for i in range(rows.shape[0]):
        apply_action(hot, cold, turn, moves, pcg, cf, rows[i], actions[i])


@njit(cache=True)
def batch_agent_actions(hot, cf, arng, kind, out):
    """In-engine agent choice for every running game (``kind``: ``KIND_RANDOM`` or ``KIND_GREEDY``);
    -1 for games over."""
    na = cf[C_NA]
    mask = np.empty(na, np.int8)
    legal = np.empty(na, np.uint8)
    nopcg = np.zeros((1, 6), np.uint64)
    for b in range(hot.shape[0]):
        count = legal_actions(hot, cf, b, mask, legal)
        out[b] = agent_choice(hot, cf, arng, nopcg, b, kind, legal, count) if count else -1


@njit(cache=True)
def batch_random_legal(hot, cf, masks, legal, counts, arng, out):
    """A uniformly random legal action per game (-1 for games over), from the mask buffer's legal
    lists, recomputed first for games changed since :func:`batch_masks`."""
    for b in range(hot.shape[0]):
        if hot[b, G_FRESH] == 0:
            counts[b] = legal_actions(hot, cf, b, masks[b], legal[b])
            hot[b, G_FRESH] = 1
        c = counts[b]
        out[b] = np.int64(legal[b, agent_below(arng, b, c)]) if c else -1


@njit(cache=True)
def batch_reach_chance(hot, seat, powers, out):
    """Per game: :func:`_reach` of ``seat``'s stock top from its hand and discard tops (the numbers
    there, wilds as jokers) on the game's building piles, in pile order; ``powers[k]``: the chance
    that ``k`` missing numbers all come from unseen cards."""
    base = G_SEATS + seat * SEAT_HOT
    numbers = np.zeros(PILE_COMPLETE + 2, np.bool_)
    key = np.empty(4, np.int64)
    for b in range(hot.shape[0]):
        for v in range(1, PILE_COMPLETE + 1):
            numbers[v] = hot[b, base + S_HAND + v] > 0
        jokers = np.int64(hot[b, base + S_HAND + WILD])
        for d in range(4):
            top = hot[b, base + S_TOP + d]
            if top == WILD:
                jokers += 1
            elif top != 0:
                numbers[top] = True
        for k in range(4):
            key[k] = hot[b, G_BN + k]
        out[b] = _reach(np.int64(hot[b, base + S_STOP]), key, numbers, jokers, powers)


@njit(cache=True)
def learner_advance(hot, cold, turn, moves, pcg, cf, arng, seat_kind, learner, wts, plans, hstate, expect):
    """Play the in-engine agents until each game waits for a learner or an outside seat, or ends.

    ``seat_kind[r]`` is the kind (``KIND_*``) of the seat ``r`` places after the learner
    (``r = (seat - learner[b]) % n``). The heuristic's plan cache is row ``b * n + seat`` of
    ``plans``/``hstate``/``expect`` (see :func:`heuristic_choice`; all four None: a heuristic seat
    stops like an outside one); its rare greedy fallback draws from the game's agent stream.
    Returns the number of decisions played.
    """
    n = cf[C_N]
    mask = np.empty(cf[C_NA], np.int8)
    legal = np.empty(cf[C_NA], np.uint8)
    pos = np.empty(H_SIZE, np.int64)
    sig = np.empty(H_SIG, np.int64)
    nopcg = np.zeros((1, 6), np.uint64)
    kinds = np.empty(n, np.int64)
    played = 0
    for b in range(hot.shape[0]):
        for seat in range(n):
            kinds[seat] = seat_kind[(seat - learner[b]) % n]
        played += _advance_game(hot, cold, turn, moves, pcg, cf, arng, nopcg, False, b, kinds, wts, plans, hstate,
                                expect, mask, legal, pos, sig)
    return played


@njit(cache=True)
def rollout_random(hot, cold, turn, moves, pcg, cf, tab, arng, rounds, masks, obs, with_obs):
    """Benchmark kernel: ``rounds`` rounds of one random legal decision in every game.

    Each round computes every game's mask (and the mover's observation when
    ``with_obs``), picks a random allowed action, applies it, and deals a new
    game in any slot whose game ended. Returns the number of games finished.
    """
    legal = np.empty(cf[C_NA], np.uint8)
    finished = 0
    for _ in range(rounds):
        for b in range(hot.shape[0]):
            count = legal_actions(hot, cf, b, masks[b], legal)
            if with_obs:
                observe_into(hot, turn, cf, tab, b, np.int64(hot[b, G_CUR]), obs[b])
            apply_action(hot, cold, turn, moves, pcg, cf, b, np.int64(legal[agent_below(arng, b, count)]))
            if hot[b, G_DONE] != 0:
                finished += 1
                deal(hot, cold, turn, moves, pcg, cf, b)
    return finished
