"""engram.cli"""
