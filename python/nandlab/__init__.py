from ._native import *
