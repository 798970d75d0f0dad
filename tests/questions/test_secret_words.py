"""Form fields that ask for a secret in languages other than English are masked too (issue 23 item 9): password,
PIN and one-time-code words in German, Spanish, French, Portuguese, Russian, Chinese, Japanese and Korean (and a
few more), as field names, titles and descriptions; the everyday words next to them are not."""

from __future__ import annotations

import pytest

from langgraph_mcp.questions.inspection import sensitive_fields

SECRET_NAMES = [
    "passwort",
    "neues_Passwort",
    "kennwort",
    "contraseña",
    "nuevaContraseña",
    "mot_de_passe",
    "motDePasse",
    "senha",
    "пароль",
    "новый_пароль",
    "密码",
    "登录密码",
    "パスワード",
    "비밀번호",
    "wachtwoord",
    "hasło",
    "şifre",
    "lösenord",
    "geheimzahl",
    "pin_code",
    "код_подтверждения",
    "пин_код",
    "验证码",
    "認証コード",
    "暗証番号",
    "인증번호",
    "código_de_verificación",
    "código_de_verificação",
    "code_de_vérification",
    "einmalcode",
    "bestätigungscode",
]
"""Each asks for a password, a PIN or a one-time code."""

HARMLESS_NAMES = [
    "username",
    "nombre",
    "passé",
    "mot",
    "passe_partout",
    "palabra_clave",
    "código_postal",
    "код_страны",
    "пароход",
    "密码学",
    "名前",
    "이름",
    "passwort_hinweis",
    "contraseña_longitud",
    "Kennwortlänge",
    "pinned",
    "spinner",
]
"""Everyday words, including ones that describe a secret without being one (a hint, a length)."""


def form(*names: str) -> dict[str, object]:
    return {"type": "object", "properties": {name: {"type": "string"} for name in names}}


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_secret_field_name_in_another_language_is_sensitive(name: str) -> None:
    assert sensitive_fields(form(name)) == [name]


@pytest.mark.parametrize("name", HARMLESS_NAMES)
def test_everyday_words_in_other_languages_are_not_sensitive(name: str) -> None:
    assert sensitive_fields(form(name)) == []


def test_titles_and_descriptions_in_other_languages() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "title": "Ihr Passwort"},
            "b": {"type": "string", "description": "Introduzca su contraseña"},
            "c": {"type": "string", "description": "Votre mot de passe"},
            "d": {"type": "string", "title": "Введите пароль"},
            "e": {"type": "string", "description": "请输入您的密码"},
            "f": {"type": "string", "title": "ワンタイムパスワード"},
            "g": {"type": "string", "description": "비밀번호를 입력하세요"},
            "h": {"type": "string", "description": "Código de verificación enviado por SMS"},
            "i": {"type": "string", "description": "Ihr Name"},
            "j": {"type": "string", "description": "Votre adresse"},
            "k": {"type": "string", "title": "Ваш город"},
            "l": {"type": "string", "description": "请输入您的姓名"},
        },
    }
    assert sensitive_fields(schema) == ["a", "b", "c", "d", "e", "f", "g", "h"]
