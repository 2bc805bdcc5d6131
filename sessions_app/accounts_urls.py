"""URL patterns of accounts (namespace "accounts"): signing in and out, one-time sign-in links, the
password; mounted by pitree_web.urls under ``accounts/``."""

from django.contrib.auth import views as auth_views
from django.urls import path

from .views import accounts

urlpatterns = [
    path("login/", accounts.SignInView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("once/<str:token>/", accounts.once, name="once"),
    path("password/", accounts.password, name="password"),
]
