"""placeholder"""
F32X4 = {}
