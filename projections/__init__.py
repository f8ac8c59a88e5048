"""engram.projections"""
