"""engram.schemas"""
