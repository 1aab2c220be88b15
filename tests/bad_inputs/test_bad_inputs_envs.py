"""The bad-input catalogue of the environments: every env of ``tabular.envs`` (and every
public function of its modules), given what a careless user passes, raises a clear error
naming the parameter and the place (cell, state, action) before anything is built.

Each row is ``(id, call, exception type, fragment of the message)``; the id starts with
the callable's name. Sizes are refused before they are allocated (each of these rows
would otherwise ask for gigabytes), so the whole catalogue runs in seconds.
"""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium as gym
import numpy as np
from conftest import clear_error_test, option_rows

import tabular
from tabular import MDPError, TabularMDP, envs
from tabular.envs import (
    AccessControl,
    BairdCounterexample,
    CarRental,
    Chain,
    DeepSea,
    FourRoom,
    GridWorld,
    MaximizationBias,
    ModelEnv,
    NRoom,
    PickupGridWorld,
    Racetrack,
    RandomMDP,
    RandomWalk,
    RiverSwim,
    TokenMDP,
    TrapTreasure,
    blackjack,
    gridworld,
    racetrack,
)
from tabular.envs.layout import layout_text, parse_layout
from tabular.envs.mazes import DYNA_MAZE, changing_maze, finer_maze, greedy_steps, maze
from tabular.envs.open_grid import open_grid_mdp
from tabular.envs.registration import BUILTINS
from tabular.envs.scenarios import capital_of_france

NAN, INF = math.nan, math.inf
CORRIDOR = "S.G"
RACE = Racetrack()
RACE_S = RACE.to_mdp().n_states
TOKENS = TokenMDP()
DYNA = maze(DYNA_MAZE).to_mdp()
CHAIN_ARRAYS = (np.zeros((2, 1, 1), dtype=int), np.ones((2, 1, 1)), np.zeros((2, 1, 1)),
                np.zeros((2, 1, 1), dtype=bool), np.array([1.0, 0.0]))


def chain(**metadata):
    return lambda: TabularMDP(*CHAIN_ARRAYS, **metadata)


GRIDWORLD_ROWS = [
    # rewards: real numbers only, no text, no bool
    ("GridWorld step_reward text", lambda: GridWorld(CORRIDOR, step_reward="-1"), ValueError,
     "step_reward must be a number, got '-1' (str)"),
    ("GridWorld goal_reward True", lambda: GridWorld(CORRIDOR, goal_reward=True), ValueError,
     "goal_reward must be a number, got True"),
    ("GridWorld trap_reward text", lambda: GridWorld("S.T", trap_reward="-5"), ValueError,
     "trap_reward must be a number"),
    ("GridWorld cliff_reward None", lambda: GridWorld("SCG", cliff_reward=None), ValueError,
     "cliff_reward must be a number, got None"),
    ("GridWorld bump_reward numpy bool", lambda: GridWorld(CORRIDOR, bump_reward=np.True_),
     ValueError, "bump_reward must be a number"),
    ("GridWorld step_reward +inf", lambda: GridWorld(CORRIDOR, step_reward=INF), ValueError,
     "step_reward must be a finite number"),
    ("GridWorld cell_rewards text value", lambda: GridWorld("SxG", cell_rewards={"x": "3"}),
     ValueError, "cell_rewards['x'] must be a number"),
    ("GridWorld cell_rewards fractional cell", lambda: GridWorld(
        CORRIDOR, cell_rewards={(0, 1.5): 1.0}), ValueError,
     "cell_rewards[(0, 1.5)]: a cell is a layout character or (row, col), two integers"),
    ("GridWorld cell_rewards bool cell", lambda: GridWorld(
        CORRIDOR, cell_rewards={(True, 0): 1.0}), ValueError, "cell_rewards[(True, 0)]"),
    ("GridWorld cell_rewards cell outside", lambda: GridWorld(
        CORRIDOR, cell_rewards={(0, -1): 1.0}), ValueError,
     "cell_rewards[(0, -1)]: cell (row 0, column -1) is outside the 1x3 layout"),
    ("GridWorld cell_rewards a list", lambda: GridWorld(CORRIDOR, cell_rewards=[1, 2]),
     ValueError, "cell_rewards must be a dict or None, got list"),
    ("GridWorld teleport reward text", lambda: GridWorld(
        "SAaG", teleports={"A": ("a", "10")}), ValueError,
     "teleports['A'] reward must be a number, got '10'"),
    ("GridWorld teleport reward True", lambda: GridWorld(
        "SAaG", teleports={"A": ("a", True)}), ValueError,
     "teleports['A'] reward must be a number"),
    ("GridWorld teleport target fractional", lambda: GridWorld(
        "SA.G", teleports={"A": ((0, 1.5), 1.0)}), ValueError,
     "teleports['A']: a cell is a layout character or (row, col), two integers, got (0, 1.5)"),
    ("GridWorld teleports a list", lambda: GridWorld("SAaG", teleports=[("A", ("a", 1.0))]),
     ValueError, "teleports must be a dict or None, got list"),
    ("GridWorld slip text", lambda: GridWorld(CORRIDOR, slip="0.1"), ValueError,
     "slip must be a number, got '0.1'"),
    ("GridWorld slip True", lambda: GridWorld(CORRIDOR, slip=True), ValueError,
     "slip must be a number, got True"),
    ("GridWorld slip 1.5", lambda: GridWorld(CORRIDOR, slip=1.5), ValueError,
     "slip must be in [0, 1]"),
    ("GridWorld wind bools", lambda: GridWorld(CORRIDOR, wind=[True, False, True]), ValueError,
     "wind must hold real numbers, got bool"),
    ("GridWorld wind text", lambda: GridWorld(CORRIDOR, wind=["a", "b", "c"]), ValueError,
     "wind must hold real numbers"),
    ("GridWorld wind 2-d", lambda: GridWorld(CORRIDOR, wind=[[0, 0, 0]]), ValueError,
     "wind must give one integer per column: the layout has 3 columns, got shape (1, 3)"),
    ("GridWorld wind fractional", lambda: GridWorld(CORRIDOR, wind=[0, 0.5, 0]), ValueError,
     "wind[1] = 0.5 (column 1) is not an integer"),
    ("GridWorld wind NaN", lambda: GridWorld(CORRIDOR, wind=[0, NAN, 0]), ValueError,
     "wind[1] = nan (column 1)"),
    # layouts: text, rows, a shipped name or a .txt path; never a path by accident
    ("GridWorld long layout line", lambda: GridWorld("S" * 5000 + "?"), ValueError,
     "layout row 0, column 5000: unknown character '?'"),
    ("GridWorld long .txt path", lambda: GridWorld("S" * 5000 + ".txt"), ValueError,
     "cannot be read"),
    ("GridWorld misspelt layout name", lambda: GridWorld("cliff_walkin"), ValueError,
     "no layout file named 'cliff_walkin' either (shipped: cliff_walking"),
    ("GridWorld missing .txt", lambda: GridWorld("no_such.txt"), ValueError,
     "layout file 'no_such.txt' not found"),
    ("GridWorld layout a directory", lambda: GridWorld(Path("/")), ValueError,
     "layout file '/' not found"),
    ("GridWorld layout bytes", lambda: GridWorld(b"S.G"), ValueError,
     "layout must be a string, a list of rows or a path, got bytes"),
    ("GridWorld layout rows not text", lambda: GridWorld([1, 2]), ValueError,
     "layout rows must be strings"),
    ("GridWorld layout tab", lambda: GridWorld("S\tG"), ValueError,
     "layout row 0, column 1: unknown character '\\t'"),
    ("GridWorld ragged layout", lambda: GridWorld("S.G\n.."), ValueError,
     "layout row 1 has 2 cells, row 0 has 3"),
    ("GridWorld cliff layout too big", lambda: GridWorld(("S" * 100 + "\n") * 99 + "C" * 100),
     ValueError, "the layout (10,000 states x 4 actions x 9900 outcomes) makes 396,000,000 "
     "outcome slots"),
    ("GridWorld render_mode human", lambda: GridWorld(CORRIDOR, render_mode="human"),
     ValueError, "render_mode must be one of ['ansi', 'rgb_array'] or None, got 'human'"),
    # coordinates and pictures
    ("GridWorld state_of_cell text row", lambda: GridWorld(CORRIDOR).state_of_cell("0", 1),
     ValueError, "row must be an integer, got '0'"),
    ("GridWorld state_of_cell fractional col", lambda: GridWorld(CORRIDOR).state_of_cell(0, 1.5),
     ValueError, "col must be an integer, got 1.5"),
    ("GridWorld state_of_cell outside", lambda: GridWorld(CORRIDOR).state_of_cell(0, 3),
     ValueError, "cell (row 0, column 3) is outside the 1x3 layout"),
    ("GridWorld cell_of_state fractional", lambda: GridWorld(CORRIDOR).cell_of_state(1.5),
     ValueError, "state must be an integer in [0, 3), got 1.5"),
    ("GridWorld cell_of_state -1", lambda: GridWorld(CORRIDOR).cell_of_state(-1), ValueError,
     "state must be in [0, 3): -1 is outside"),
    ("GridWorld render_rgb cell_pixels 0", lambda: GridWorld(CORRIDOR).render_rgb(0),
     ValueError, "cell_pixels must be an integer >= 1, got 0"),
    ("GridWorld render_rgb cell_pixels 1.5", lambda: GridWorld(CORRIDOR).render_rgb(1.5),
     ValueError, "cell_pixels must be an integer >= 1, got 1.5"),
    ("GridWorld render_rgb cell_pixels huge", lambda: GridWorld(CORRIDOR).render_rgb(10**6),
     ValueError, "cell_pixels=1000000 on the 1x3 layout makes 3,000,000,000,000 pixels"),
]

PICKUP_ROWS = [
    ("PickupGridWorld pickups text value", lambda: PickupGridWorld("S$G", pickups={"$": "5"}),
     ValueError, "pickups['$'] must be a number, got '5'"),
    ("PickupGridWorld pickups True", lambda: PickupGridWorld("S$G", pickups={"$": True}),
     ValueError, "pickups['$'] must be a number, got True"),
    ("PickupGridWorld pickups key int", lambda: PickupGridWorld("S$G", pickups={1: 1.0}),
     ValueError, "pickups key 1 must be one layout character outside the legend"),
    ("PickupGridWorld pickups key in legend", lambda: PickupGridWorld("S.G", pickups={".": 1.0}),
     ValueError, "pickups key '.' must be one layout character"),
    ("PickupGridWorld pickups a list", lambda: PickupGridWorld("S$G", pickups=[("$", 1.0)]),
     ValueError, "pickups must be a non-empty {char: reward} dict"),
    ("PickupGridWorld 13 pickups", lambda: PickupGridWorld("S" + "$" * 13 + "G",
                                                           pickups={"$": 1.0}),
     ValueError, "the layout holds 13 pickup cells; at most 12"),
    ("PickupGridWorld step_reward text", lambda: PickupGridWorld(
        "S$G", pickups={"$": 1.0}, step_reward="x"), ValueError,
     "step_reward must be a number, got 'x'"),
    ("PickupGridWorld too many states", lambda: PickupGridWorld(
        ("." * 100 + "\n") * 100 + "S" + "$" * 12 + "G" + "." * 86, pickups={"$": 1.0}),
     ValueError, "the layout with 12 pickups (10,100 cells x 2^12 states x 4 actions x 1"),
    ("PickupGridWorld state_of_cell collected 1.5", lambda: PickupGridWorld(
        "S$G", pickups={"$": 1.0}).state_of_cell(0, 0, 1.5), ValueError,
     "collected must be an integer in [0, 2), got 1.5"),
    ("PickupGridWorld state_of_cell collected 0.0", lambda: PickupGridWorld(
        "S$G", pickups={"$": 1.0}).state_of_cell(0, 0, 0.0), ValueError,
     "collected must be an integer in [0, 2), got 0.0"),
    ("PickupGridWorld state_of_cell collected 5", lambda: PickupGridWorld(
        "S$G", pickups={"$": 1.0}).state_of_cell(0, 0, 5), ValueError,
     "collected must be in [0, 2): 5 is outside"),
]

TRAP_TREASURE_ROWS = [
    ("TrapTreasure trap_reward text", lambda: TrapTreasure(trap_reward="-10"), ValueError,
     "trap_reward must be a number, got '-10'"),
    ("TrapTreasure treasure_reward True", lambda: TrapTreasure(treasure_reward=True),
     ValueError, "treasure_reward must be a number, got True"),
    ("TrapTreasure slip 2", lambda: TrapTreasure(slip=2), ValueError, "slip must be in [0, 1]"),
    ("TrapTreasure state_of fractional", lambda: TrapTreasure().state_of(1.5, 1), ValueError,
     "i must be an integer (from 1), got 1.5"),
    ("TrapTreasure state_of 0", lambda: TrapTreasure().state_of(0, 1), ValueError,
     "cell (row 0, column -1) is outside the 5x5 layout"),
    ("TrapTreasure cell_of -1", lambda: TrapTreasure().cell_of(-1), ValueError,
     "state must be in [0, 22): -1 is outside"),
    ("TrapTreasure left_of_trap without a trap", lambda: TrapTreasure(CORRIDOR).left_of_trap,
     ValueError, "no floor cell directly left of a trap"),
]

RACETRACK_ROWS = [
    ("Racetrack noise text", lambda: Racetrack(noise="0.1"), ValueError,
     "noise must be a number, got '0.1'"),
    ("Racetrack noise True", lambda: Racetrack(noise=True), ValueError,
     "noise must be a number, got True"),
    ("Racetrack max_speed True", lambda: Racetrack(max_speed=True), ValueError,
     "max_speed must be an integer >= 1, got True"),
    ("Racetrack max_speed 2.5", lambda: Racetrack(max_speed=2.5), ValueError,
     "max_speed must be an integer >= 1, got 2.5"),
    ("Racetrack track too big", lambda: Racetrack(("." * 2000 + "\n") * 1000 + "S" * 1999 + "F"),
     ValueError, "the 1001x2000 layout with max_speed=4 makes 50,050,000 cell-velocity entries"),
    ("Racetrack too many start cells", lambda: Racetrack(
        ("." * 300 + "\n") * 20 + "S" * 299 + "F"), ValueError,
     "(151,499 states x 9 actions x 598 outcomes) makes"),
    ("Racetrack layout with a goal", lambda: Racetrack("..F\nSSG"), ValueError,
     "a racetrack has only"),
    ("Racetrack trajectory policy 99", lambda: RACE.trajectory(np.full(RACE_S, 99), 0),
     ValueError, "policy[0] = 99 is not an action in [0, 9) (state 0 ((0, 3) v=(0, 1)))"),
    ("Racetrack trajectory policy -1", lambda: RACE.trajectory(np.full(RACE_S, -1), 0),
     ValueError, "policy[0] = -1 is not an action in [0, 9) (state 0"),
    ("Racetrack trajectory policy fractional", lambda: RACE.trajectory(np.full(RACE_S, 1.5), 0),
     ValueError, "policy must hold integer action ids, got float64"),
    ("Racetrack trajectory policy probabilities", lambda: RACE.trajectory(
        np.full((RACE_S, 9), 1 / 9), 0), ValueError,
     f"policy must be {RACE_S} action ids, got shape ({RACE_S}, 9)"),
    ("Racetrack trajectory start_cell 0.5", lambda: RACE.trajectory(
        np.zeros(RACE_S, dtype=int), 0.5), ValueError,
     "start_cell must be an integer in [0, 6), got 0.5"),
    ("Racetrack trajectory start_cell True", lambda: RACE.trajectory(
        np.zeros(RACE_S, dtype=int), True), ValueError,
     "start_cell must be an integer in [0, 6), got True"),
    ("Racetrack trajectory start_cell -1", lambda: RACE.trajectory(
        np.zeros(RACE_S, dtype=int), -1), ValueError, "start_cell must be in [0, 6): -1"),
    ("Racetrack trajectory seed -1", lambda: RACE.trajectory(
        np.zeros(RACE_S, dtype=int), 0, seed=-1), ValueError,
     "seed must be None or an int >= 0, got -1"),
    ("Racetrack trajectory max_steps 0", lambda: RACE.trajectory(
        np.zeros(RACE_S, dtype=int), 0, max_steps=0), ValueError,
     "max_steps must be an integer >= 1, got 0"),
    ("Racetrack trajectory max_steps huge", lambda: RACE.trajectory(
        np.zeros(RACE_S, dtype=int), 0, max_steps=10**12), ValueError,
     "max_steps must be at most 100,000,000"),
]

CAR_RENTAL_ROWS = [
    ("CarRental rental_reward text", lambda: CarRental(max_cars=3, rental_reward="10"),
     ValueError, "rental_reward must be a number, got '10'"),
    ("CarRental rental_reward True", lambda: CarRental(max_cars=3, rental_reward=True),
     ValueError, "rental_reward must be a number, got True"),
    ("CarRental move_cost text", lambda: CarRental(max_cars=3, move_cost="2"), ValueError,
     "move_cost must be a number"),
    ("CarRental parking_cost True", lambda: CarRental(max_cars=3, parking_cost=True),
     ValueError, "parking_cost must be a number"),
    ("CarRental max_move huge", lambda: CarRental(max_cars=3, max_move=10**6), ValueError,
     "max_cars=3 with max_move=1000000 makes 512,000,256 outcome slots (11.9 GiB)"),
    ("CarRental max_move True", lambda: CarRental(max_cars=3, max_move=True), ValueError,
     "max_move must be an integer >= 1, got True"),
    ("CarRental max_cars 2.5", lambda: CarRental(max_cars=2.5), ValueError,
     "max_cars must be an integer >= 1, got 2.5"),
    ("CarRental free_moves True", lambda: CarRental(max_cars=3, free_moves=True), ValueError,
     "free_moves must be a number, got True"),
    ("CarRental parking_limit 2.5", lambda: CarRental(max_cars=3, parking_limit=2.5),
     ValueError, "parking_limit must be an integer >= 0, got 2.5"),
    ("CarRental request_rates text", lambda: CarRental(max_cars=3, request_rates="34"),
     ValueError, "request_rates must be two Poisson means (first location, second), got '34'"),
    ("CarRental request_rates True", lambda: CarRental(max_cars=3, request_rates=(True, 1.0)),
     ValueError, "request_rates[0] must be a number, got True"),
    ("CarRental request_rates huge", lambda: CarRental(max_cars=3, request_rates=(1e308, 1.0)),
     ValueError, "request_rates[0] must be at most 1,000"),
    ("CarRental return_rates -1", lambda: CarRental(max_cars=3, return_rates=(3.0, -1.0)),
     ValueError, "return_rates[1] must be a finite number >= 0"),
    ("CarRental cars fractional", lambda: CarRental(max_cars=3).cars(1.5), ValueError,
     "s must be an integer in [0, 16), got 1.5"),
    ("CarRental cars -1", lambda: CarRental(max_cars=3).cars(-1), ValueError,
     "s must be in [0, 16): -1 is outside"),
    ("CarRental net_moves action 99", lambda: CarRental(max_cars=3).net_moves(np.full(16, 99)),
     ValueError, "policy[0] = 99 is not an action in [0, 11) (state 0 (0 at first, 0 at second))"),
]

#: The options of the book's environments, each wrong in one way (rows of conftest's
#: option_rows): ``(id, the options, fragment of the ValueError)``, the id starting with
#: the class's name in tabular.envs.
SUTTON_BARTO_OPTION_BAD = [
    ("TicTacToe opponent text", {"opponent": "clever"},
     "opponent must be 'random', 'minimax' or a [5478, 9] array"),
    ("TicTacToe player Z", {"player": "Z"}, "player must be 'X' or 'O', got 'Z'"),
    ("TicTacToe rewards NaN", {"rewards": (1.0, NAN, -1.0)}, "rewards[1]"),
    ("TicTacToe opponent on a taken cell", {"opponent": np.full((5478, 9), 1 / 9)},
     "TicTacToe: opponent[1] = "),
    ("Gambler p_h text", {"p_h": "0.4"}, "p_h must be a number"),
    ("Gambler goal True", {"goal": True}, "goal must be an integer >= 1, got True"),
    ("Gambler goal huge", {"goal": 10**5},
     "goal=100000 makes 10,000,300,002 outcome slots (232.8 GiB)"),
    ("RandomWalk left_reward text", {"left_reward": "0"}, "left_reward must be a number, got '0'"),
    ("RandomWalk right_reward True", {"right_reward": True},
     "right_reward must be a number, got True"),
    ("MaximizationBias rewards normal", {"rewards": "normal"},
     "rewards must be one of 'two_point', 'gaussian', got 'normal'"),
    ("MaximizationBias rewards None", {"rewards": None},
     "rewards must be one of 'two_point', 'gaussian', got None"),
    ("Blackjack render_mode rgb_array", {"render_mode": "rgb_array"},
     "render_mode must be one of ['ansi'] or None"),
    ("ShortCorridor render_mode True", {"render_mode": True},
     "render_mode must be one of ['ansi'] or None, got True"),
    ("BairdCounterexample render_mode human", {"render_mode": "human"},
     "render_mode must be one of"),
    ("AccessControl n_servers 0", {"n_servers": 0}, "n_servers must be an integer >= 1, got 0"),
    ("AccessControl n_servers True", {"n_servers": True},
     "n_servers must be an integer >= 1, got True"),
    ("AccessControl n_servers huge", {"n_servers": 10**4}, "n_servers=10000 makes"),
    ("AccessControl free_prob 2", {"free_prob": 2.0}, "free_prob must be in [0, 1], got 2.0"),
    ("AccessControl free_prob text", {"free_prob": "0.06"}, "free_prob"),
    ("AccessControl render_mode human", {"render_mode": "human"}, "render_mode must be one of"),
    ("MountainCar positions 1", {"positions": 1},
     "positions must be an integer in [2, 1,000], got 1"),
    ("MountainCar positions True", {"positions": True},
     "positions must be an integer in [2, 1,000], got True"),
    ("MountainCar positions huge", {"positions": 10**4},
     "positions must be an integer in [2, 1,000], got 10000"),
    ("MountainCar positions 2.5", {"positions": 2.5},
     "positions must be an integer in [2, 1,000], got 2.5"),
    ("MountainCar velocities even", {"velocities": 50},
     "velocities must be odd, so that velocity 0 is a grid point, got 50"),
    ("MountainCar velocities 1", {"velocities": 1},
     "velocities must be an integer in [3, 1,001], got 1"),
    ("MountainCar velocities text", {"velocities": "51"},
     "velocities must be an integer in [3, 1,001], got '51'"),
    ("MountainCar velocities huge", {"velocities": 10**6 + 1},
     "velocities must be an integer in [3, 1,001], got 1000001"),
    ("MountainCar render_mode human", {"render_mode": "human"}, "render_mode must be one of"),
    ("Gridworld5x5 render_mode human", {"render_mode": "human"}, "render_mode must be one of"),
    ("Gridworld4x4 render_mode human", {"render_mode": "human"}, "render_mode must be one of"),
    ("WindyGridworld render_mode human", {"render_mode": "human"}, "render_mode must be one of"),
    ("CliffWalking render_mode human", {"render_mode": "human"}, "render_mode must be one of"),
]
SUTTON_BARTO_ROWS = [
    ("RandomWalk n_states huge", lambda: RandomWalk(10**9), ValueError,
     "n_states must be at most 10,000,000"),
    ("RandomWalk jump huge", lambda: RandomWalk(10**6, jump=10**5), ValueError,
     "n_states=1000000 with jump=100000 makes 200,000,400,000 outcome slots"),
    ("MaximizationBias n_b_actions huge", lambda: MaximizationBias(10**7), ValueError,
     "n_b_actions=10000000 makes 40,000,000 outcome slots"),
    ("MaximizationBias n_b_actions True", lambda: MaximizationBias(True), ValueError,
     "n_b_actions must be an integer >= 1, got True"),
    ("ModelEnv not a model", lambda: ModelEnv("CliffWalking"), TypeError,
     "mdp must be a tabular.TabularMDP, got str"),
] + list(option_rows(SUTTON_BARTO_OPTION_BAD, lambda name: getattr(envs, name)))

TOKEN_ROWS = [
    ("TokenMDP prompts a number", lambda: TokenMDP(5), ValueError,
     "prompts must be a list of strings, got 5"),
    ("TokenMDP prompts numbers", lambda: TokenMDP([1, 2]), ValueError,
     "prompts[0] must be a string, got 1"),
    ("TokenMDP max_len True", lambda: TokenMDP(max_len=True), ValueError,
     "max_len must be an integer >= 1, got True"),
    ("TokenMDP max_len NaN", lambda: TokenMDP(max_len=NAN), ValueError,
     "max_len must be an integer >= 1, got nan"),
    ("TokenMDP max_len huge", lambda: TokenMDP(max_len=10**9), ValueError,
     "max_len must be at most 100,000"),
    ("TokenMDP max_states text", lambda: TokenMDP(max_states="10"), ValueError,
     "max_states must be an integer >= 1, got '10'"),
    ("TokenMDP max_states huge", lambda: TokenMDP(max_states=10**12), ValueError,
     "max_states must be at most 20,000,000"),
    ("TokenMDP too many outcome slots", lambda: TokenMDP(
        ["x"], vocab=[f"w{i}" for i in range(2000)] + ["x"], max_len=2,
        max_states=2 * 10**7), ValueError, "the prefix tree (4,008,005 states x 2002 tokens)"),
    ("TokenMDP vocab one string", lambda: TokenMDP(vocab="hello"), ValueError,
     "vocab must be a list of strings, got 'hello'"),
    ("TokenMDP vocab numbers", lambda: TokenMDP(vocab=[1, 2]), ValueError,
     "vocab[0] must be a string, got 1"),
    ("TokenMDP eos a number", lambda: TokenMDP(eos=5), ValueError,
     "eos must be a non-empty token string, got 5"),
    ("TokenMDP grammar numbers", lambda: TokenMDP(grammar=[1, 2]), ValueError,
     "grammar[0] must be a string, got 1"),
    ("TokenMDP grammar mapping numbers", lambda: TokenMDP(grammar={"Say hello.": [1]}),
     ValueError, "grammar['Say hello.'][0] must be a string"),
    ("TokenMDP reward text value", lambda: TokenMDP(reward={"hello": "1"}), ValueError,
     "the reward of prompt 'Say hello.', response 'hello' must be a number, got '1'"),
    ("TokenMDP illegal_reward True", lambda: TokenMDP(illegal_reward=True), ValueError,
     "illegal_reward must be a number, got True"),
    ("TokenMDP prompt_probs bool", lambda: TokenMDP(prompt_probs=[True]), ValueError,
     "prompt_probs must hold numbers, got bool"),
    ("TokenMDP prompt_probs text", lambda: TokenMDP(prompt_probs=["1"]), ValueError,
     "prompt_probs must hold numbers"),
    ("TokenMDP state_of unknown prompt", lambda: TOKENS.state_of("Say bye."), ValueError,
     "prompt 'Say bye.' is not one of the 1 prompts"),
    ("TokenMDP state_of prompt 5", lambda: TOKENS.state_of(5), ValueError,
     "prompt must be in [0, 1): 5 is outside"),
    ("TokenMDP state_of token -1", lambda: TOKENS.state_of(0, [-1]), ValueError,
     "token id must be in [0, 4): -1 is outside"),
    ("TokenMDP text state 999", lambda: TOKENS.text(999), ValueError,
     "s must be in [0, 53): 999 is outside"),
    ("TokenMDP context state -1", lambda: TOKENS.context(-1), ValueError,
     "s must be in [0, 53): -1 is outside"),
    ("TokenMDP response_ids state 1.5", lambda: TOKENS.response_ids(1.5), ValueError,
     "s must be an integer in [0, 53), got 1.5"),
    ("TokenMDP decode token 999", lambda: TOKENS.decode([999]), ValueError,
     "token id must be in [0, 4): 999 is outside"),
    ("TokenMDP encode a number", lambda: TOKENS.encode(5), ValueError,
     "text must be a string, got int"),
    ("TokenMDP reward prompt 9", lambda: TOKENS.reward(9, ()), ValueError,
     "prompt must be in [0, 1): 9 is outside"),
    ("TokenMDP legal_tokens prompt 9", lambda: TOKENS.legal_tokens(9, ()), ValueError,
     "prompt must be in [0, 1): 9 is outside"),
    ("TokenMDP final_state unknown token", lambda: TOKENS.final_state(0, "zzz"), ValueError,
     "token 'zzz' is not in the vocabulary"),
]

SCENARIO_ROWS = [
    ("capital_of_france reward text", lambda: capital_of_france(reward="golden"), ValueError,
     "reward must be 'gold' or a TokenMDP reward"),
    ("capital_of_france reward array", lambda: capital_of_france(reward=np.array([1, 2])),
     TypeError, "reward must be a callable (prompt, response) -> float or a mapping"),
    ("load_scenario a path", lambda: envs.load_scenario("../../etc/passwd"), ValueError,
     "name must be the name of a scenario file of envs/data"),
    ("load_scenario a number", lambda: envs.load_scenario(5), ValueError,
     "name must be the name of a scenario file of envs/data"),
    ("load_scenario unknown", lambda: envs.load_scenario("nope"), FileNotFoundError,
     "no scenario file nope.txt in envs/data (shipped: assistant, capital_of_france)"),
    ("load_grammar_scenario a path", lambda: envs.load_grammar_scenario("/etc/passwd"),
     ValueError, "name must be the name of a scenario file"),
    ("Scenario.env illegal_reward text", lambda: envs.load_scenario().env(illegal_reward="x"),
     ValueError, "illegal_reward must be a number, got 'x'"),
    ("GrammarScenario.env max_states 0", lambda: envs.load_grammar_scenario().env(max_states=0),
     ValueError, "max_states must be an integer >= 1, got 0"),
]

FUNCTION_ROWS = [
    ("finer_maze factor huge", lambda: finer_maze(DYNA_MAZE, 10**5), ValueError,
     "factor=100000 on the 6x9 layout makes 540,000,000,000 cells"),
    ("finer_maze factor True", lambda: finer_maze(DYNA_MAZE, True), ValueError,
     "factor must be an integer >= 1, got True"),
    ("finer_maze bad layout", lambda: finer_maze("S?G", 2), ValueError,
     "layout row 0, column 1: unknown character '?'"),
    ("maze a number", lambda: maze(5), ValueError, "layout must be a string"),
    ("changing_maze sizes", lambda: changing_maze("S.G", "S..G"), ValueError,
     "before and after must have the same size"),
    ("greedy_steps Q shape", lambda: greedy_steps(DYNA, np.zeros(3), 10), ValueError,
     "Q must be [47, 4] action values, got float64 of shape (3,)"),
    ("greedy_steps Q NaN", lambda: greedy_steps(DYNA, np.full((47, 4), NAN), 10), ValueError,
     "Q[0] = [nan nan nan nan] is not finite (state 0 ((0, 0)))"),
    ("greedy_steps limit 0", lambda: greedy_steps(DYNA, np.zeros((47, 4)), 0), ValueError,
     "limit must be an integer >= 1, got 0"),
    ("greedy_steps not a model", lambda: greedy_steps("maze", np.zeros((47, 4)), 10), TypeError,
     "mdp must be a tabular.TabularMDP, got str"),
    ("open_grid_mdp too big", lambda: open_grid_mdp(10**6, 10**6), ValueError,
     "height=1,000,000 x width=1,000,000 makes 1,000,000,000,000 states"),
    ("open_grid_mdp height True", lambda: open_grid_mdp(True, 3), ValueError,
     "height must be an integer >= 1, got True"),
    ("open_grid_mdp step_reward text", lambda: open_grid_mdp(3, 3, step_reward="-1"),
     ValueError, "step_reward must be a number, got '-1'"),
    ("open_grid_mdp goal_reward True", lambda: open_grid_mdp(3, 3, goal_reward=True),
     ValueError, "goal_reward must be a number, got True"),
    ("open_grid_mdp goal_reward NaN", lambda: open_grid_mdp(3, 3, goal_reward=NAN),
     ValueError, "goal_reward must be a finite number"),
    ("layout_text a number", lambda: layout_text(5), ValueError,
     "layout must be a string, a list of rows or a path, got int"),
    ("parse_layout a number", lambda: parse_layout(5), ValueError,
     "layout text must be a string, got int"),
    ("register_gridworld env_id a number", lambda: envs.register_gridworld(5, CORRIDOR),
     ValueError, "env_id must be a string"),
    ("register_gridworld max_episode_steps text", lambda: envs.register_gridworld(
        "edges/Text-v0", CORRIDOR, max_episode_steps="10"), ValueError,
     "max_episode_steps must be an integer >= 1, got '10'"),
    ("register_gridworld max_episode_steps 0", lambda: envs.register_gridworld(
        "edges/Zero-v0", CORRIDOR, max_episode_steps=0), ValueError,
     "max_episode_steps must be an integer >= 1, got 0"),
    ("register_gridworld bad option", lambda: envs.register_gridworld(
        "edges/Option-v0", CORRIDOR, goal_reward="1"), ValueError,
     "goal_reward must be a number, got '1'"),
    ("register_gridworld unknown option", lambda: envs.register_gridworld(
        "edges/Unknown-v0", CORRIDOR, colour=3), TypeError, "colour"),
    ("register_builtins arguments", lambda: envs.register_builtins(True), TypeError,
     "register_builtins() takes 0 positional arguments"),
]

MAKE_ROWS = [  # options given through gymnasium.make reach the same checks
    ("CarRental via make rental_reward", lambda: gym.make(
        "tabzoo/CarRental-v0", max_cars=3, rental_reward="10"), ValueError,
     "rental_reward must be a number"),
    ("CarRental via make unknown option", lambda: gym.make("tabzoo/CarRental-v0", max_carz=3),
     TypeError, "max_carz"),
    ("RandomWalk via make n_states text", lambda: gym.make("tabzoo/RandomWalk-v0",
                                                            n_states="5"),
     ValueError, "n_states must be an integer >= 1, got '5'"),
    ("Gambler via make goal", lambda: gym.make("tabzoo/Gambler-v0", goal=1.5), ValueError,
     "goal must be an integer >= 1, got 1.5"),
    ("Racetrack via make noise", lambda: gym.make("tabzoo/Racetrack-v0", noise=NAN),
     ValueError, "noise must be in [0, 1]"),
    ("TrapTreasure via make slip", lambda: gym.make("tabzoo/TrapTreasure-v0", slip="0"),
     ValueError, "slip must be a number"),
    ("TokenMDP via make max_len", lambda: gym.make("tabzoo/TokenMDP-v0", max_len=0),
     ValueError, "max_len must be an integer >= 1, got 0"),
    ("capital_of_france via make reward", lambda: gym.make("tabzoo/CapitalOfFrance-v0",
                                                            reward="golden"),
     ValueError, "reward must be 'gold'"),
    ("TrapTreasure via the old id", lambda: gym.make("tabular/TrapTreasure-v0"),
     envs.registration.RenamedEnvError, "is now tabzoo/TrapTreasure-v0"),
]

MDP_ROWS = [  # tabular/model/mdp.py: the metadata the envs pass
    ("TabularMDP state_cells outside grid_shape", chain(grid_shape=(1, 1),
                                                        state_cells=[[0, 0], [5, 5]]),
     MDPError, "state_cells[1] = (row 5, col 5) of state 1 is outside the grid_shape 1x1"),
    ("TabularMDP state_cells negative", chain(state_cells=[[0, 0], [-1, 0]]), MDPError,
     "state_cells[1] = (row -1, col 0) of state 1 is not a cell"),
    ("TabularMDP state_cells fractional", chain(state_cells=[[0, 0], [0.5, 0]]), MDPError,
     "state_cells"),
    ("TabularMDP grid_shape text", chain(grid_shape="ab"), MDPError,
     "grid_shape must be (rows, cols), two integers >= 1, got 'ab'"),
    ("TabularMDP grid_shape 0", chain(grid_shape=(0, 2)), MDPError,
     "grid_shape must be (rows, cols), two integers >= 1, got (0, 2)"),
    ("TabularMDP grid_shape three", chain(grid_shape=(1, 2, 3)), MDPError,
     "grid_shape must be (rows, cols)"),
    ("TabularMDP grid_shape bool", chain(grid_shape=(True, 2)), MDPError,
     "grid_shape must be (rows, cols)"),
]

EXPLORATION_ROWS = [  # envs/exploration.py
    ("RiverSwim n_states 1", lambda: RiverSwim(1), ValueError,
     "n_states must be an integer in [2,"),
    ("RiverSwim n_states 2.5", lambda: RiverSwim(2.5), ValueError, "n_states must be an integer"),
    ("RiverSwim large_reward NaN", lambda: RiverSwim(large_reward=NAN), ValueError,
     "large_reward"),
    ("RiverSwim small_reward text", lambda: RiverSwim(small_reward="1"), ValueError,
     "small_reward"),
    ("Chain slip 1.5", lambda: Chain(slip=1.5), ValueError, "slip must be in [0, 1]"),
    ("Chain n_states True", lambda: Chain(True), ValueError, "n_states must be an integer"),
    ("Chain end_reward inf", lambda: Chain(end_reward=INF), ValueError, "end_reward"),
    ("DeepSea size 0", lambda: DeepSea(0), ValueError, "size must be an integer >= 1"),
    ("DeepSea size huge", lambda: DeepSea(10**6), ValueError, "size must be at most 2,000"),
    ("DeepSea mapping_seed -1", lambda: DeepSea(mapping_seed=-1), ValueError,
     "seed must be None or an int >= 0"),
    ("DeepSea move_cost 2", lambda: DeepSea(move_cost=2.0), ValueError,
     "move_cost must be in [0, 1]"),
    ("FourRoom slip -0.1", lambda: FourRoom(slip=-0.1), ValueError, "slip"),
    ("FourRoom goal_reward NaN", lambda: FourRoom(goal_reward=NAN), ValueError, "goal_reward"),
    ("NRoom n_rooms 0", lambda: NRoom(0), ValueError, "n_rooms must be an integer >= 1"),
    ("NRoom room_size 1.5", lambda: NRoom(room_size=1.5), ValueError, "room_size must be"),
    ("NRoom one cell", lambda: NRoom(1, 1), ValueError, "leaves no cell for the goal"),
    ("NRoom huge", lambda: NRoom(1000, 1000), ValueError, "outcome slots"),
    ("RandomMDP branching past n_states", lambda: RandomMDP(4, branching=5), ValueError,
     "branching must be at most 4"),
    ("RandomMDP n_actions 0", lambda: RandomMDP(n_actions=0), ValueError,
     "n_actions must be an integer >= 1"),
    ("RandomMDP seed None", lambda: RandomMDP(seed=None), ValueError,
     "seed must be an int >= 0"),
    ("RandomMDP seed text", lambda: RandomMDP(seed="0"), ValueError, "seed must be None or"),
    ("RandomMDP huge", lambda: RandomMDP(10**5, 10**3, 10), ValueError, "outcome slots"),
]

BANDIT_ROWS = [  # tabular/learn/bandits.py: the testbed is the bandits' environment
    ("epsilon_greedy_bandit testbed k huge", lambda: tabular.epsilon_greedy_bandit(
        tabular.BanditTestbed(k=10**9), steps=1), ValueError,
     "runs=1 x testbed.k=1000000000 makes 1,000,000,000 arm values (14.9 GiB)"),
    ("epsilon_greedy_bandit steps huge", lambda: tabular.epsilon_greedy_bandit(steps=10**12),
     ValueError, "runs=1 x steps=1000000000000 makes 1,000,000,000,000 recorded steps"),
    ("ucb_bandit runs x steps huge", lambda: tabular.ucb_bandit(steps=10**6, runs=10**5),
     ValueError, "runs=100000 x steps=1000000 makes 100,000,000,000 recorded steps"),
    ("gradient_bandit baseline text", lambda: tabular.gradient_bandit(baseline="no", steps=3),
     ValueError, "baseline must be True or False, got 'no'"),
]


def stepped(make, action):
    """A call that steps a freshly reset env (``make()``) with ``action``."""
    def call():
        env = make()
        env.reset(seed=0)
        return env.step(action)
    return call


def reset_with(make, **kwargs):
    return lambda: make().reset(**kwargs)


#: Every env, by the name of its class (or registered function), and how to make it:
#: through gymnasium.make for the registered ones, directly for the others.
ENV_MAKERS = {
    "GridWorld": (lambda: GridWorld(CORRIDOR), 4),
    "PickupGridWorld": (lambda: PickupGridWorld("S$G", pickups={"$": 1.0}), 4),
    "ModelEnv": (lambda: ModelEnv(DYNA), 4),
    "TrapTreasure": (lambda: gym.make("tabzoo/TrapTreasure-v0"), 4),
    "Gridworld5x5": (lambda: gym.make("tabzoo/Gridworld5x5-v0"), 4),
    "Gridworld4x4": (lambda: gym.make("tabzoo/Gridworld4x4-v0"), 4),
    "Gambler": (lambda: gym.make("tabzoo/Gambler-v0"), 51),
    "RandomWalk": (lambda: gym.make("tabzoo/RandomWalk-v0"), 1),
    "WindyGridworld": (lambda: gym.make("tabzoo/WindyGridworld-v0"), 4),
    "CliffWalking": (lambda: gym.make("tabzoo/CliffWalking-v0"), 4),
    "ShortCorridor": (lambda: gym.make("tabzoo/ShortCorridor-v0"), 2),
    "MaximizationBias": (lambda: gym.make("tabzoo/MaximizationBias-v0"), 10),
    "TicTacToe": (lambda: gym.make("tabzoo/TicTacToe-v0"), 9),
    "TokenMDP": (lambda: gym.make("tabzoo/TokenMDP-v0"), 4),
    "capital_of_france": (lambda: gym.make("tabzoo/CapitalOfFrance-v0"), None),
    "CarRental": (lambda: gym.make("tabzoo/CarRental-v0", max_cars=3), 11),
    "Blackjack": (lambda: gym.make("tabzoo/Blackjack-v0"), 2),
    "Racetrack": (lambda: gym.make("tabzoo/Racetrack-v0"), 9),
    "BairdCounterexample": (lambda: gym.make("tabzoo/BairdCounterexample-v0"), 2),
    "AccessControl": (lambda: gym.make("tabzoo/AccessControl-v0"), 2),
    "MountainCar": (lambda: gym.make("tabzoo/MountainCar-v0", positions=5, velocities=5), 3),
    "RiverSwim": (lambda: gym.make("tabzoo/RiverSwim-v0"), 2),
    "Chain": (lambda: gym.make("tabzoo/Chain-v0"), 2),
    "DeepSea": (lambda: gym.make("tabzoo/DeepSea-v0", size=4), 2),
    "FourRoom": (lambda: gym.make("tabzoo/FourRoom-v0"), 4),
    "NRoom": (lambda: gym.make("tabzoo/NRoom-v0"), 4),
    "RandomMDP": (lambda: gym.make("tabzoo/RandomMDP-v0", n_actions=3), 3),
}
BAD_ACTIONS = [(-1, "action -1 is outside"), (1.5, "got 1.5 (float)"), ("a", "got 'a' (str)"),
               (True, "got True (bool)"), (np.array([1]), "got array([1]) (ndarray)")]

STEP_ROWS = []
for name, (make, n_actions) in ENV_MAKERS.items():
    if n_actions is not None:
        STEP_ROWS.append((f"{name} step {n_actions}", stepped(make, n_actions), ValueError,
                          f"action {n_actions} is outside [0, {n_actions})"))
    for action, fragment in BAD_ACTIONS:
        STEP_ROWS.append((f"{name} step {action!r}", stepped(make, action), ValueError,
                          fragment))
STEP_ROWS += [
    ("capital_of_france step 99", stepped(ENV_MAKERS["capital_of_france"][0], 99), ValueError,
     "action 99 is outside"),
    ("GridWorld step before reset", lambda: GridWorld(CORRIDOR).step(0), RuntimeError,
     "call reset() before step()"),
    ("GridWorld reset options", reset_with(lambda: GridWorld(CORRIDOR), options={"start": 3}),
     ValueError, "options: GridWorld.reset takes no options, got {'start': 3}"),
    ("GridWorld reset options text", reset_with(lambda: GridWorld(CORRIDOR), options="x"),
     ValueError, "options: GridWorld.reset takes no options, got 'x'"),
    ("GridWorld reset seed True", reset_with(lambda: GridWorld(CORRIDOR), seed=True),
     ValueError, "seed must be None or an int >= 0, got True"),
    ("GridWorld reset seed -1", reset_with(lambda: GridWorld(CORRIDOR), seed=-1), ValueError,
     "seed must be None or an int >= 0, got -1"),
    ("CliffWalking reset options via make", reset_with(ENV_MAKERS["CliffWalking"][0],
                                                       options={"state": 0}),
     ValueError, "options: CliffWalking.reset takes no options"),
    ("Blackjack reset seed text via make", reset_with(ENV_MAKERS["Blackjack"][0], seed="1"),
     ValueError, "seed must be None or an int >= 0, got '1'"),
]


def set_first(array, value):
    return lambda: array.__setitem__((0,) * array.ndim, value)


# Issue 45: NumPy's complex and bool scalars, bools inside lists, and shared constants
# that one user's in-place edit would change for every later user (read-only now).
EDGE_ROWS = [
    ("AccessControl free_prob np.complex128", lambda: AccessControl(
        free_prob=np.complex128(0.06)), ValueError, "free_prob must be a number"),
    ("AccessControl free_prob np.bool_", lambda: AccessControl(free_prob=np.bool_(True)),
     ValueError, "free_prob must be a number"),
    ("AccessControl n_servers np.bool_", lambda: AccessControl(n_servers=np.bool_(True)),
     ValueError, "n_servers must be an integer >= 1"),
    ("GridWorld wind [True, 0, 0]", lambda: GridWorld(CORRIDOR, wind=[True, 0, 0]), ValueError,
     "wind[0] is a bool"),
    ("GridWorld slip np.complex128", lambda: GridWorld(CORRIDOR, slip=np.complex128(0.1)),
     ValueError, "slip must be a number"),
    ("TokenMDP prompt_probs [True]", lambda: TokenMDP(prompt_probs=[True]), ValueError,
     "prompt_probs must hold numbers"),
    ("TokenMDP illegal_reward np.complex128", lambda: TokenMDP(
        illegal_reward=np.complex128(-1)), ValueError, "illegal_reward must be a number"),
    ("BairdCounterexample.INITIAL_WEIGHTS edited in place",
     set_first(BairdCounterexample.INITIAL_WEIGHTS, 5.0), ValueError, "read-only"),
    ("BairdCounterexample.BEHAVIOUR edited in place",
     set_first(BairdCounterexample.BEHAVIOUR, 0.5), ValueError, "read-only"),
    ("BairdCounterexample.TARGET edited in place", set_first(BairdCounterexample.TARGET, 0.5),
     ValueError, "read-only"),
    ("Blackjack CARD_PROBS edited in place", set_first(blackjack.CARD_PROBS, 0.5), ValueError,
     "read-only"),
    ("Blackjack CARDS edited in place", set_first(blackjack.CARDS, 2), ValueError, "read-only"),
    ("Blackjack SUMS edited in place", set_first(blackjack.SUMS, 2), ValueError, "read-only"),
    ("GridWorld MOVES edited in place", set_first(gridworld.MOVES, 2), ValueError, "read-only"),
    ("Racetrack INCREMENTS edited in place", set_first(racetrack.INCREMENTS, 2), ValueError,
     "read-only"),
]

ROWS = (GRIDWORLD_ROWS + PICKUP_ROWS + TRAP_TREASURE_ROWS + RACETRACK_ROWS + CAR_RENTAL_ROWS
        + SUTTON_BARTO_ROWS + TOKEN_ROWS + SCENARIO_ROWS + FUNCTION_ROWS + MAKE_ROWS + MDP_ROWS
        + BANDIT_ROWS + EXPLORATION_ROWS + STEP_ROWS + EDGE_ROWS)


test_bad_input_is_a_clear_error = clear_error_test(ROWS)


def covered():
    """The callables the rows call: the first word of each id, up to a ``.``."""
    return {row[0].split()[0].split(".")[0] for row in ROWS}


def registered():
    """The names of the classes and functions that the built-in ids make."""
    return {entry_point.split(":")[1] for entry_point, _ in BUILTINS.values()}


def test_the_catalogue_covers_every_env_and_public_function():
    public = set(envs.__all__) | registered()
    missing = sorted(public - covered())
    assert not missing, f"no catalogue row calls {missing}"
    module_functions = {"finer_maze", "maze", "changing_maze", "greedy_steps", "open_grid_mdp",
                        "layout_text", "parse_layout"}
    assert not module_functions - covered()


def test_every_env_has_a_step_row():
    env_names = {name for name in envs.__all__ if isinstance(getattr(envs, name), type)
                 and issubclass(getattr(envs, name), gym.Env)} | registered()
    stepped_envs = {row[0].split()[0] for row in ROWS if row[0].split()[1:2] == ["step"]}
    missing = sorted(env_names - stepped_envs)
    assert not missing, f"no step row for {missing}"
