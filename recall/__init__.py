"""engram.recall"""
