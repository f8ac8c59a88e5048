"""engram.streams"""
