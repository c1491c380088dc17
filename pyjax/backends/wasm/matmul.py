"""placeholder"""


def match(cg):
    return None
